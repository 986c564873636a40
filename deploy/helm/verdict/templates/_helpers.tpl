{{/*
The labels of every object: the chart's, then .Values.commonLabels.
*/}}
{{- define "verdict.labels" -}}
app.kubernetes.io/part-of: verdict
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The labels that never change between versions of the chart, for the
fields that cannot change once created (a StatefulSet's
volumeClaimTemplates).
*/}}
{{- define "verdict.staticLabels" -}}
app.kubernetes.io/part-of: verdict
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The selector labels of a component: (dict "component" "server").
*/}}
{{- define "verdict.selectorLabels" -}}
app.kubernetes.io/name: verdict
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
The labels of a component's object: (dict "root" $ "component" "server").
*/}}
{{- define "verdict.componentLabels" -}}
{{ include "verdict.labels" .root }}
{{ include "verdict.selectorLabels" . }}
{{- end }}

{{/*
The labels of a component's pods: the component's and .podLabels.
*/}}
{{- define "verdict.podLabels" -}}
{{ include "verdict.componentLabels" . }}
{{- with .values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The container image.
*/}}
{{- define "verdict.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
The DNS name of a Service of the release namespace: (dict "root" $ "name" "verdict-server").
*/}}
{{- define "verdict.serviceHost" -}}
{{ .name }}.{{ .root.Release.Namespace }}.svc.{{ .root.Values.clusterDomain }}
{{- end }}

{{/*
The pod securityContext of every component: user 65532, RuntimeDefault
seccomp (the restricted Pod Security Standard).
*/}}
{{- define "verdict.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
{{- if .fsGroup }}
fsGroup: 65532
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
The container securityContext of every component.
*/}}
{{- define "verdict.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
  - ALL
  # Also by name, for policies that look for it (require-drop-cap-net-raw).
  - NET_RAW
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
The scheduling fields of a component's pod spec: (dict "root" $ "component"
"server" "values" .Values.server). Without .values.affinity, a preferred
anti-affinity spreads the component's pods over nodes.
*/}}
{{- define "verdict.scheduling" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- if .values.affinity }}
affinity:
{{- toYaml .values.affinity | nindent 2 }}
{{- else }}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "verdict.selectorLabels" . | nindent 12 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end }}

{{/*
The matchConditions of the resource webhooks: Kyverno's default
resourceFilters, plus Leases: the objects that change all the time and
that policies have no business with.
*/}}
{{- define "verdict.matchConditions" -}}
- name: not-leases
  expression: '!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")'
- name: not-events
  expression: 'request.resource.resource != "events"'
- name: not-nodes
  expression: '!(request.resource.group == "" && request.resource.resource == "nodes")'
- name: not-replicasets
  expression: '!(request.resource.group == "apps" && request.resource.resource == "replicasets")'
- name: not-bindings
  expression: 'request.resource.resource != "bindings" && !(has(request.subResource) && request.subResource == "binding")'
- name: not-reviews
  expression: '!(request.resource.group in ["authentication.k8s.io", "authorization.k8s.io", "apiregistration.k8s.io"])'
- name: not-reports
  expression: '!(request.resource.group in ["wgpolicyk8s.io", "openreports.io"])'
{{- end }}

{{/*
The namespaceSelector of the resource webhooks: never Verdict's own
namespace nor .Values.webhook.excludedNamespaces (for Namespace objects,
the selector applies to the Namespace itself).
*/}}
{{- define "verdict.namespaceSelector" -}}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: NotIn
  values:
  - {{ .Release.Namespace }}
  {{- range .Values.webhook.excludedNamespaces }}
  - {{ . }}
  {{- end }}
{{- end }}
