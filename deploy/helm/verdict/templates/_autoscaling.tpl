{{/*
The HorizontalPodAutoscaler and PodDisruptionBudget of a Deployment:
(dict "root" $ "component" "server" "values" .Values.server "name"
"verdict-server"), each behind its enabled value.
*/}}
{{- define "verdict.autoscaling" -}}
{{- $v := .values }}
{{- if $v.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ .name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "verdict.componentLabels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ .name }}
  minReplicas: {{ $v.autoscaling.minReplicas }}
  maxReplicas: {{ $v.autoscaling.maxReplicas }}
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: {{ $v.autoscaling.targetCPUUtilizationPercentage }}
  {{- with $v.autoscaling.extraMetrics }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: {{ $v.autoscaling.scaleDownStabilizationSeconds }}
{{- end }}
{{- if $v.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "verdict.componentLabels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $v.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "verdict.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}
