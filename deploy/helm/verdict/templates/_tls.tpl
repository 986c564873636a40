{{/*
The webhook's serving certificate with webhook.tls.mode "helm", as YAML
(caCert, cert, key; PEM): the Secret verdict-webhook-tls of an earlier
install when it has all three, else a new CA and a certificate for the
webhook Service signed by it (helm template: always new).
*/}}
{{- define "verdict.webhookTLS" -}}
{{- $host := printf "verdict-webhook.%s.svc" .Release.Namespace -}}
{{- $old := lookup "v1" "Secret" .Release.Namespace "verdict-webhook-tls" -}}
{{- if and $old $old.data (index $old.data "ca.crt") (index $old.data "tls.crt") (index $old.data "tls.key") -}}
caCert: {{ index $old.data "ca.crt" | b64dec | quote }}
cert: {{ index $old.data "tls.crt" | b64dec | quote }}
key: {{ index $old.data "tls.key" | b64dec | quote }}
{{- else -}}
{{- $days := int .Values.webhook.tls.validityDays -}}
{{- $ca := genCA "verdict webhook CA" $days -}}
{{- $cert := genSignedCert $host nil (list $host (printf "%s.%s" $host .Values.clusterDomain)) $days $ca -}}
caCert: {{ $ca.Cert | quote }}
cert: {{ $cert.Cert | quote }}
key: {{ $cert.Key | quote }}
{{- end -}}
{{- end }}

{{/*
The caBundle of the webhook configurations: (dict "root" $ "tls" $tls),
where $tls is verdict.webhookTLS with mode "helm".
*/}}
{{- define "verdict.caBundle" -}}
{{- $mode := .root.Values.webhook.tls.mode -}}
{{- if eq $mode "helm" -}}
{{ .tls.caCert | b64enc }}
{{- else if eq $mode "secret" -}}
{{ .root.Values.webhook.tls.caBundle }}
{{- end -}}
{{- end }}
