{{/* The name of every controller object: fixed by default (values.yaml says why). */}}
{{- define "noderotation.fullname" -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels the kustomize base also sets, plus Helm's standard ones. */}}
{{- define "noderotation.labels" -}}
app.kubernetes.io/name: noderotation
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The controller Pods' selector: the same as the kustomize base, so that one can replace the other. */}}
{{- define "noderotation.selectorLabels" -}}
app.kubernetes.io/name: noderotation
app.kubernetes.io/component: controller
{{- end -}}

{{- define "noderotation.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}
