{{/* The chart's name, as app.kubernetes.io/name: "noderotation" unless nameOverride. */}}
{{- define "noderotation.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The name of every controller object: fullnameOverride, fixed by default (values.yaml says why); set it to "" for
Helm's usual <release>-<name> (just <release> when that already contains the name).
*/}}
{{- define "noderotation.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "noderotation.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The controller's ServiceAccount: the chart's (serviceAccount.create) or one that exists already. */}}
{{- define "noderotation.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "noderotation.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name the ServiceAccount to run as when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The labels the kustomize base also sets, plus Helm's standard ones. */}}
{{- define "noderotation.labels" -}}
app.kubernetes.io/name: {{ include "noderotation.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The controller Pods' selector: the same as the kustomize base, so that one can replace the other. */}}
{{- define "noderotation.selectorLabels" -}}
app.kubernetes.io/name: {{ include "noderotation.name" . }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "noderotation.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
A security context from values ("ctx": podSecurityContext or securityContext) as YAML, empty when nothing is left.
With openshift.adaptSecurityContext it drops the user and group IDs, which OpenShift's restricted-v2 SCC assigns
from the namespace's range and refuses when set to anything else. A map cannot be emptied with `{}` (Helm merges
maps into the defaults), hence this value.
*/}}
{{- define "noderotation.securityContext" -}}
{{- $ctx := .ctx | default dict -}}
{{- if .root.Values.openshift.adaptSecurityContext -}}
{{- $ctx = omit $ctx "runAsUser" "runAsGroup" "fsGroup" -}}
{{- end -}}
{{- if $ctx -}}
{{- toYaml $ctx -}}
{{- end -}}
{{- end -}}
