{{/*
Names. They use .Values and .Release only (not .Chart), so that another chart including the
sidecar templates with this chart's values gets the same names as the objects rendered here.
*/}}
{{- define "talos-reconciler.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "talos-reconciler" .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "talos-reconciler.selectorLabels" -}}
app.kubernetes.io/name: {{ default "talos-reconciler" .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "talos-reconciler.labels" -}}
{{ include "talos-reconciler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "talos-reconciler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "talos-reconciler.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "talos-reconciler.gitSecretName" -}}
{{- default (printf "%s-git" (include "talos-reconciler.fullname" .)) .Values.git.auth.existingSecret -}}
{{- end -}}

{{- define "talos-reconciler.webhookSecretName" -}}
{{- default (printf "%s-webhook" (include "talos-reconciler.fullname" .)) .Values.webhook.existingSecret -}}
{{- end -}}

{{- define "talos-reconciler.forgeSecretName" -}}
{{- default (printf "%s-forge" (include "talos-reconciler.fullname" .)) .Values.forge.existingSecret -}}
{{- end -}}

{{- define "talos-reconciler.talosconfigSecretName" -}}
{{- $ctx := index . 0 -}}{{- $cluster := index . 1 -}}
{{- default (printf "%s-talos-%s" (include "talos-reconciler.fullname" $ctx) $cluster.name | trunc 253) $cluster.existingSecret -}}
{{- end -}}

{{/* The arguments of `talos-reconciler run`. */}}
{{- define "talos-reconciler.args" -}}
{{- $v := .Values -}}
{{- $r := $v.reconciler -}}
- run
- --repo={{ required "git.repo is required" $v.git.repo }}
- --branch={{ $v.git.branch }}
- --status-branch={{ $v.git.statusBranch }}
- --poll-interval={{ $v.git.pollInterval }}
- --credentials-dir=/etc/talos-reconciler/talos
- --state-dir=/var/lib/talos-reconciler
- --listen=0.0.0.0:{{ $v.metrics.port }}
- --node-name=$(NODE_NAME)
- --resync={{ $r.resync }}
- --propose-interval={{ $r.proposeInterval }}
- --workers={{ $r.workers }}
- --node-poll-interval={{ $r.nodePollInterval }}
- --drain-timeout={{ $r.drainTimeout }}
- --log-level={{ $r.logLevel }}
{{- if $r.dryRun }}
- --dry-run
{{- end }}
{{- if eq $v.git.auth.type "token" }}
- --git-token-file=/etc/talos-reconciler/git/token
{{- end }}
{{- if eq $v.git.auth.type "ssh" }}
- --git-ssh-key=/etc/talos-reconciler/git/ssh-privatekey
- --git-known-hosts=/etc/talos-reconciler/git/known_hosts
{{- end }}
{{- if $v.git.auth.username }}
- --git-username={{ $v.git.auth.username }}
{{- end }}
{{- if $v.webhook.enabled }}
- --webhook-listen=0.0.0.0:{{ $v.webhook.port }}
- --webhook-secret-file=/etc/talos-reconciler/webhook/secret
{{- end }}
{{- if $v.forge.type }}
- --forge={{ $v.forge.type }}
- --forge-token-file=/etc/talos-reconciler/forge/token
{{- if or $v.forge.apiUrl (ne $v.forge.type "github") }}
- --forge-api-url={{ required "forge.apiUrl is required for gitlab, gitea and forgejo" $v.forge.apiUrl }}
{{- end }}
{{- if $v.forge.repository }}
- --forge-repository={{ $v.forge.repository }}
{{- end }}
{{- end }}
{{- with $v.installerRegistry }}
{{- if .url }}
- --installer-registry={{ .url }}
- --installer-registry-ttl={{ .ttl }}
- --installer-registry-timeout={{ .timeout }}
{{- if .existingSecret }}
- --installer-registry-credentials-file=/etc/talos-reconciler/registry/credentials
{{- end }}
{{- end }}
{{- end }}
{{- if $r.kubernetesUpgradeMode }}
- --kubernetes-upgrade-mode={{ $r.kubernetesUpgradeMode }}
{{- end }}
{{- if eq $r.kubernetesUpgradeMode "job" }}
{{- /* The Jobs run this chart's image and mount the same talosconfig Secrets. */}}
- --kubernetes-upgrade-job-image={{ include "talos-reconciler.image" . }}
{{- range $v.talosconfigs }}
- --kubernetes-upgrade-job-secret={{ .name }}={{ include "talos-reconciler.talosconfigSecretName" (list $ .) }}
{{- end }}
{{- end }}
{{- with $v.leaderElection }}
{{- if .enabled }}
- --leader-elect
- --leader-elect-namespace=$(POD_NAMESPACE)
- --leader-elect-name={{ include "talos-reconciler.fullname" $ }}
- --leader-elect-identity=$(POD_NAME)
- --leader-elect-lease-duration={{ .leaseDuration }}
- --leader-elect-renew-deadline={{ .renewDeadline }}
- --leader-elect-retry-period={{ .retryPeriod }}
- --shards={{ .shards }}
{{- end }}
{{- end }}
{{- range $v.notify }}
{{- $dir := printf "/etc/talos-reconciler/notify/%s" .name }}
{{- $entry := .entry }}
{{- range (.files | default list) }}
{{- $entry = printf "%s,%s-file=%s/%s" $entry . $dir . }}
{{- end }}
- --notify={{ $entry }}
{{- end }}
{{- range $r.extraArgs }}
- {{ . }}
{{- end }}
{{- end -}}

{{/*
The reconciler's container (one list item). Another chart puts it under initContainers when
sidecar.native is true (it then has restartPolicy: Always), otherwise under containers, and adds
"talos-reconciler.volumes" to its pod's volumes. Call it with a context whose .Values are this
chart's values, .Release the release, .Chart this chart (image.tag defaults to its appVersion) and
.Capabilities the cluster's (openshift.adaptSecurityContext: auto):
  (dict "Values" $sub.Values "Release" .Release "Chart" $sub.Chart "Capabilities" .Capabilities)
with $sub := index .Subcharts "talos-reconciler".
*/}}
{{- define "talos-reconciler.container" -}}
{{- $v := .Values -}}
- name: talos-reconciler
  image: {{ include "talos-reconciler.image" . | quote }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  {{- if and (eq $v.mode "sidecar") $v.sidecar.native }}
  restartPolicy: Always
  {{- end }}
  args:
    {{- include "talos-reconciler.args" . | nindent 4 }}
  env:
    - name: NODE_NAME
      valueFrom:
        fieldRef:
          fieldPath: spec.nodeName
    - name: POD_NAMESPACE
      valueFrom:
        fieldRef:
          fieldPath: metadata.namespace
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    {{- with $v.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.envFrom }}
  envFrom:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    - name: metrics
      containerPort: {{ $v.metrics.port }}
      protocol: TCP
    {{- if $v.webhook.enabled }}
    - name: webhook
      containerPort: {{ $v.webhook.port }}
      protocol: TCP
    {{- end }}
  {{- range $probe := list "startupProbe" "livenessProbe" "readinessProbe" }}
  {{- with index $v $probe }}
  {{ $probe }}:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- end }}
  resources:
    {{- toYaml $v.resources | nindent 4 }}
  securityContext:
    {{- include "talos-reconciler.securityContext" . | nindent 4 }}
  volumeMounts:
    - name: talos-reconciler-state
      mountPath: /var/lib/talos-reconciler
    - name: talos-reconciler-tmp
      mountPath: /tmp
    {{- range $v.talosconfigs }}
    - name: {{ printf "talos-reconciler-talos-%s" .name | trunc 63 | trimSuffix "-" }}
      mountPath: {{ printf "/etc/talos-reconciler/talos/%s" .name }}
      readOnly: true
    {{- end }}
    {{- if ne $v.git.auth.type "none" }}
    - name: talos-reconciler-git
      mountPath: /etc/talos-reconciler/git
      readOnly: true
    {{- end }}
    {{- if $v.webhook.enabled }}
    - name: talos-reconciler-webhook
      mountPath: /etc/talos-reconciler/webhook
      readOnly: true
    {{- end }}
    {{- if $v.forge.type }}
    - name: talos-reconciler-forge
      mountPath: /etc/talos-reconciler/forge
      readOnly: true
    {{- end }}
    {{- if and $v.installerRegistry.url $v.installerRegistry.existingSecret }}
    - name: talos-reconciler-registry
      mountPath: /etc/talos-reconciler/registry
      readOnly: true
    {{- end }}
    {{- range $v.notify }}
    {{- if .files }}
    - name: {{ printf "talos-reconciler-notify-%s" .name | trunc 63 | trimSuffix "-" }}
      mountPath: {{ printf "/etc/talos-reconciler/notify/%s" .name }}
      readOnly: true
    {{- end }}
    {{- end }}
    {{- with $v.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* Kept as the name docs/helm.md uses: the sidecar is the container above. */}}
{{- define "talos-reconciler.sidecar" -}}
{{ include "talos-reconciler.container" . }}
{{- end -}}

{{/*
The `strategy:` of the Deployment whose pods run the container, this chart's or, in sidecar mode,
the application's: two reconcilers must never act on one cluster at once, and a RollingUpdate
starts the new pod before the old one stops. Without leader election the old pod stops first
(Recreate, which also lets go of a claimed state volume); with it the Leases decide who acts, and
a new pod stands by until an old one gives its shards back.
*/}}
{{- define "talos-reconciler.strategy" -}}
strategy:
  {{- if and .Values.leaderElection.enabled (not .Values.persistence.enabled) }}
  type: RollingUpdate
  {{- else }}
  type: Recreate
  {{- end }}
{{- end -}}

{{/* The volumes the container mounts (list items), for the pod that runs it. */}}
{{- define "talos-reconciler.volumes" -}}
{{- $v := .Values -}}
{{- $ctx := . -}}
- name: talos-reconciler-state
  {{- if $v.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ include "talos-reconciler.claimName" . }}
  {{- else }}
  emptyDir:
    sizeLimit: {{ $v.stateVolume.sizeLimit }}
  {{- end }}
- name: talos-reconciler-tmp
  emptyDir:
    sizeLimit: 64Mi
{{- range $v.talosconfigs }}
- name: {{ printf "talos-reconciler-talos-%s" .name | trunc 63 | trimSuffix "-" }}
  secret:
    secretName: {{ include "talos-reconciler.talosconfigSecretName" (list $ctx .) }}
    defaultMode: 0440
    items:
      - key: talosconfig
        path: talosconfig
{{- end }}
{{- if ne $v.git.auth.type "none" }}
- name: talos-reconciler-git
  secret:
    secretName: {{ include "talos-reconciler.gitSecretName" . }}
    defaultMode: 0440
{{- end }}
{{- if $v.webhook.enabled }}
- name: talos-reconciler-webhook
  secret:
    secretName: {{ include "talos-reconciler.webhookSecretName" . }}
    defaultMode: 0440
{{- end }}
{{- if $v.forge.type }}
- name: talos-reconciler-forge
  secret:
    secretName: {{ include "talos-reconciler.forgeSecretName" . }}
    defaultMode: 0440
{{- end }}
{{- if and $v.installerRegistry.url $v.installerRegistry.existingSecret }}
- name: talos-reconciler-registry
  secret:
    secretName: {{ $v.installerRegistry.existingSecret }}
    defaultMode: 0440
    items:
      - key: credentials
        path: credentials
{{- end }}
{{- range $v.notify }}
{{- if .files }}
- name: {{ printf "talos-reconciler-notify-%s" .name | trunc 63 | trimSuffix "-" }}
  secret:
    secretName: {{ required (printf "notify %s: files need existingSecret" .name) .existingSecret }}
    defaultMode: 0440
    items:
      {{- range .files }}
      - key: {{ . }}
        path: {{ . }}
      {{- end }}
{{- end }}
{{- end }}
{{- with $v.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The image: repository:tag, or repository:tag@digest when image.digest is set (the digest is what
the runtime pulls; the tag stays for people reading it). The tag defaults to the chart's
appVersion; a chart that includes the sidecar templates passes "Chart" in their context for that
(examples/helm/app-with-sidecar), or sets image.tag.
*/}}
{{- define "talos-reconciler.image" -}}
{{- $image := .Values.image -}}
{{- $tag := $image.tag -}}
{{- if and (not $tag) (hasKey . "Chart") -}}
{{- $tag = .Chart.AppVersion -}}
{{- end -}}
{{- $tag = required "image.tag is empty and the templates' context has no Chart to take appVersion from" $tag -}}
{{- if $image.digest -}}
{{- printf "%s:%s@%s" $image.repository $tag $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "talos-reconciler.claimName" -}}
{{- default (printf "%s-state" (include "talos-reconciler.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{/*
"true" when the fixed user, group and fsGroup are left out of the security contexts: OpenShift's
restricted-v2 assigns them from the namespace's range and refuses others. auto: when the cluster
serves security.openshift.io/v1 (the sidecar templates' context needs "Capabilities" for that).
*/}}
{{- define "talos-reconciler.openshift" -}}
{{- $mode := .Values.openshift.adaptSecurityContext -}}
{{- if eq $mode "force" -}}
true
{{- else if and (eq $mode "auto") (hasKey . "Capabilities") -}}
{{- if .Capabilities.APIVersions.Has "security.openshift.io/v1" -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pod's security context (podSecurityContext): by default the files of mounted Secrets are
readable by the container's group (fsGroup). */}}
{{- define "talos-reconciler.podSecurityContext" -}}
{{- $sc := deepCopy (.Values.podSecurityContext | default dict) -}}
{{- if include "talos-reconciler.openshift" . -}}
{{- $_ := unset $sc "runAsUser" -}}{{- $_ = unset $sc "runAsGroup" -}}{{- $_ = unset $sc "fsGroup" -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{/* The container's security context (securityContext). */}}
{{- define "talos-reconciler.securityContext" -}}
{{- $sc := deepCopy (.Values.securityContext | default dict) -}}
{{- if include "talos-reconciler.openshift" . -}}
{{- $_ := unset $sc "runAsUser" -}}{{- $_ = unset $sc "runAsGroup" -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}
