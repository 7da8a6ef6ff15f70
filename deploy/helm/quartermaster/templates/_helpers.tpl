{{- define "quartermaster.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "quartermaster.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "quartermaster.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "quartermaster.serviceAccountName" -}}
{{- default (include "quartermaster.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The Secret of the extender's mutual TLS, or "" when it is off. */}}
{{- define "quartermaster.extenderTlsSecret" -}}
{{- if .Values.extender.tls.secretName -}}
{{- .Values.extender.tls.secretName -}}
{{- else if .Values.extender.tls.generate -}}
{{- printf "%s-extender-tls" (include "quartermaster.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "quartermaster.metricsSecret" -}}
{{- default (printf "%s-metrics" (include "quartermaster.fullname" .)) .Values.metrics.secretName -}}
{{- end -}}

{{- define "quartermaster.apiServiceAccountName" -}}
{{- default (printf "%s-api" (include "quartermaster.fullname" .)) .Values.serviceAccount.apiName -}}
{{- end -}}

{{/* One Deployment of the image; .component is api | scheduler | worker, .spec its values block. */}}
{{- define "quartermaster.deployment" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "quartermaster.fullname" $root }}-{{ .component }}
  labels:
    {{- include "quartermaster.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: {{ .spec.replicas }}
  selector:
    matchLabels:
      {{- include "quartermaster.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "quartermaster.selector" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    spec:
      {{- if eq .component "api" }}
      # The API makes no Kubernetes call: its own ServiceAccount, with no role and no token mounted.
      serviceAccountName: {{ include "quartermaster.apiServiceAccountName" $root }}
      automountServiceAccountToken: false
      {{- else }}
      serviceAccountName: {{ include "quartermaster.serviceAccountName" $root }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        seccompProfile: { type: RuntimeDefault }
      containers:
        - name: {{ .component }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .component | quote }}]
          ports:
            - name: http
              containerPort: {{ .spec.port }}
            {{- if and (eq .component "scheduler") (include "quartermaster.extenderTlsSecret" $root) }}
            - name: extender
              containerPort: {{ $root.Values.extender.tls.port }}
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ include "quartermaster.fullname" $root }}
            - secretRef:
                name: {{ $root.Values.existingSecret }}
          env:
            - name: KUBECONFIG
              value: /etc/quartermaster/kubeconfig
            {{- if $root.Values.metrics.guard }}
            - name: QM_METRICS_TOKEN
              valueFrom:
                secretKeyRef:
                  name: {{ include "quartermaster.metricsSecret" $root }}
                  key: token
            {{- end }}
            {{- if and (eq .component "scheduler") (include "quartermaster.extenderTlsSecret" $root) }}
            - name: QM_EXTENDER_TLS_PORT
              value: {{ $root.Values.extender.tls.port | quote }}
            - name: QM_EXTENDER_TLS_CERT_FILE
              value: /etc/quartermaster/extender-tls/tls.crt
            - name: QM_EXTENDER_TLS_KEY_FILE
              value: /etc/quartermaster/extender-tls/tls.key
            - name: QM_EXTENDER_TLS_CLIENT_CA_FILE
              value: /etc/quartermaster/extender-tls/ca.crt
            {{- end }}
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
          readinessProbe:
            httpGet: { path: /readyz, port: http }
            periodSeconds: 5
          resources:
            {{- toYaml .spec.resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: { drop: [ALL] }
          volumeMounts:
            - name: kubeconfig
              mountPath: /etc/quartermaster
              readOnly: true
            # The root filesystem is read-only: Node.js and its libraries write temporary files here only.
            - name: tmp
              mountPath: /tmp
            {{- if and (eq .component "scheduler") (include "quartermaster.extenderTlsSecret" $root) }}
            - name: extender-tls
              mountPath: /etc/quartermaster/extender-tls
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: { sizeLimit: 64Mi }
        {{- if and (eq .component "scheduler") (include "quartermaster.extenderTlsSecret" $root) }}
        - name: extender-tls
          secret:
            secretName: {{ include "quartermaster.extenderTlsSecret" $root }}
            items:
              - { key: tls.crt, path: tls.crt }
              - { key: tls.key, path: tls.key }
              - { key: ca.crt, path: ca.crt }
        {{- end }}
        - name: kubeconfig
          configMap:
            name: {{ include "quartermaster.fullname" $root }}
            items:
              - key: kubeconfig
                path: kubeconfig
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
