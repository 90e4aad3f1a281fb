#!/usr/bin/env bash
# A single-node Kubernetes inside a network namespace of its own (avk8s):
# etcd and containerd from Debian, the control plane, kubelet, kube-proxy
# kube-router and CoreDNS from deploy/k8s/build.sh, the CNI bridge plugin.
# CoreDNS runs as the cluster DNS (a kube-dns Service in kube-system, as
# on any real cluster), answering only for cluster.local. Nothing
# listens outside the namespace and no registry is reached: images are
# imported into this containerd (import), the pause image is built here.
#
#   deploy/k8s/cluster.sh up | down | import IMAGE... | kubectl ARGS...
#
# State (certificates, etcd, containerd, kubelet) lives in .cache/k8s/run and
# is removed by down. The kubelet rewrites some host-wide sysctls at start:
# up saves them and down restores them.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
K8S_VERSION=${K8S_VERSION:-v1.34.4}
BIN=${K8S_CACHE:-$ROOT/.cache/k8s}/$K8S_VERSION/bin
RUN=$ROOT/.cache/k8s/run
NS=${AVK8S_NETNS:-avk8s}
NODE=avk8s-node
NODE_IP=10.213.0.1
POD_CIDR=10.215.0.0/24
SERVICE_CIDR=10.214.0.0/24
API_SERVICE_IP=10.214.0.1
DNS_SERVICE_IP=10.214.0.10
TOOLS_IMAGE=docker.io/avk8s/tools:local
DNS_IMAGE=docker.io/avk8s/coredns:local
CLUSTER_CIDR=10.215.0.0/16
KUBECONFIG_FILE=$RUN/pki/admin.kubeconfig
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

# nsenter, not ip netns exec: that remounts /sys, hiding the cgroup
# mounts containerd, runc and the kubelet need.
inns() { nsenter --net="/run/netns/$NS" "$@"; }
kc() { inns kubectl --kubeconfig "$KUBECONFIG_FILE" "$@"; }

start() { # name, command...: in the namespace, logs in $RUN/log
  local name=$1; shift
  # nsenter itself, not through inns: a backgrounded function is a
  # subshell, and $! would name it instead of the process.
  nsenter --net="/run/netns/$NS" "$@" >"$RUN/log/$name.log" 2>&1 &
  echo $! >"$RUN/pid/$name"
}

wait_for() { # what, seconds, command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq "$((secs * 5))"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "cluster: $what not up after ${secs}s; logs in $RUN/log" >&2
  return 1
}

certs() {
  local d=$RUN/pki
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=avk8s-ca -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  cat >"$d/san.cnf" <<EOF
[req]
distinguished_name = dn
[dn]
[ext]
subjectAltName = IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:$NODE
extendedKeyUsage = serverAuth,clientAuth
EOF
  local cn o
  for who in apiserver:kube-apiserver: admin:avk8s-admin:system:masters; do
    IFS=: read -r name cn o <<<"$who"
    local subj=/CN=$cn
    [ -n "$o" ] && subj="/O=$o/CN=$cn"
    openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
      -extfile "$d/san.cnf" -extensions ext -out "$d/$name.crt" 2>/dev/null
  done
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: avk8s
  cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$d/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$d/admin.crt", client-key: "$d/admin.key"}
contexts:
- name: avk8s
  context: {cluster: avk8s, user: admin}
current-context: avk8s
EOF
}

containerd_config() {
  mkdir -p "$RUN/cni/net.d" "$RUN/containerd"
  cat >"$RUN/cni/net.d/10-bridge.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "avk8s", "plugins": [
  {"type": "bridge", "bridge": "avcni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  # restrict_oom_score_adj: these machines refuse a negative oom_score_adj
  # even to root; without it no pod starts.
  cat >"$RUN/containerd/config.toml" <<EOF
version = 2
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"
[grpc]
  address = "$RUN/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$TOOLS_IMAGE"
  restrict_oom_score_adj = true
  # Pods' network namespaces under the state folder, so down finds them.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
EOF
}

kubelet_config() {
  mkdir -p "$RUN/kubelet"
  cat >"$RUN/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$RUN/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
containerRuntimeEndpoint: "unix://$RUN/containerd/containerd.sock"
podCIDR: $POD_CIDR
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
resolvConf: ""
clusterDNS: [$DNS_SERVICE_IP]
clusterDomain: cluster.local
EOF
}

save_sysctls() {
  [ -f "$RUN/sysctls" ] && return
  for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$RUN/sysctls"
}

restore_sysctls() {
  [ -f "$RUN/sysctls" ] || return 0
  while IFS= read -r line; do sysctl -q -w "$line" || true; done <"$RUN/sysctls"
  rm -f "$RUN/sysctls"
}

up() {
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kube-router coredns avk8s-tools; do
    [ -x "$BIN/$b" ] || { echo "cluster: $BIN/$b missing: run deploy/k8s/build.sh first" >&2; exit 1; }
  done
  if ip netns list | grep -qw "$NS"; then down; fi
  mkdir -p "$RUN/log" "$RUN/pid"
  save_sysctls
  ip netns add "$NS"
  inns ip link set lo up
  # No dummy link type in this kernel: the node address sits on a
  # port-less bridge.
  inns ip link add avnode type bridge
  inns ip addr add "$NODE_IP/32" dev avnode
  inns ip link set avnode up
  inns sysctl -q -w net.ipv4.ip_forward=1
  inns sysctl -q -w net.bridge.bridge-nf-call-iptables=1 || true
  certs
  containerd_config
  kubelet_config
  start etcd etcd --name avk8s --data-dir "$RUN/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380
  wait_for etcd 20 inns etcdctl --endpoints http://127.0.0.1:2379 endpoint health
  local p=$RUN/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
    --advertise-address "$NODE_IP" --bind-address "$NODE_IP" --secure-port 6443 \
    --service-cluster-ip-range "$SERVICE_CIDR" --client-ca-file "$p/ca.crt" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/admin.crt" --kubelet-client-key "$p/admin.key" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --authorization-mode Node,RBAC \
    --kubelet-preferred-address-types InternalIP
  wait_for kube-apiserver 60 kc get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG_FILE" \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" --leader-elect=false \
    --allocate-node-cidrs --cluster-cidr "$CLUSTER_CIDR" --node-cidr-mask-size 24 --service-cluster-ip-range "$SERVICE_CIDR"
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false
  start containerd containerd --config "$RUN/containerd/config.toml"
  wait_for containerd 30 inns ctr --address "$RUN/containerd/containerd.sock" version
  import_tools
  start kubelet "$BIN/kubelet" --config "$RUN/kubelet/config.yaml" --kubeconfig "$KUBECONFIG_FILE" \
    --hostname-override "$NODE" --node-ip "$NODE_IP" --root-dir "$RUN/kubelet/root"
  wait_for "node Ready" 60 kc wait --for=condition=Ready "node/$NODE" --timeout=1s
  # Leave the host's conntrack sysctls alone (the max-per-core of 0).
  start kube-proxy "$BIN/kube-proxy" --kubeconfig "$KUBECONFIG_FILE" --proxy-mode iptables \
    --hostname-override "$NODE" --cluster-cidr "$CLUSTER_CIDR" --oom-score-adj 0 --conntrack-max-per-core 0 \
    --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0
  engine on
  dns
  echo "cluster up: node $NODE, kubeconfig $KUBECONFIG_FILE (deploy/k8s/cluster.sh kubectl ...)"
}

# engine on|off starts or stops kube-router, the NetworkPolicy engine.
engine() {
  if [ "$1" = on ]; then
    start kube-router "$BIN/kube-router" --kubeconfig "$KUBECONFIG_FILE" --hostname-override "$NODE" \
      --run-firewall=true --run-router=false --run-service-proxy=false --metrics-port 0 --health-port 0
  else
    stop kube-router
    # What kube-router leaves behind: its chains, so traffic flows again.
    inns iptables-save | grep -v -e KUBE-ROUTER -e KUBE-NWPLCY -e KUBE-POD-FW -e KUBE-SRC | inns iptables-restore
  fi
}

# dns runs CoreDNS as the cluster DNS: a Deployment and the kube-dns
# Service in kube-system, labelled k8s-app=kube-dns as the generated
# NetworkPolicies expect. It answers for cluster.local and the reverse
# zones only: no forward plugin, so no query leaves the cluster.
dns() {
  import_binary "$DNS_IMAGE" coredns /coredns
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
        # Port 53 without a capability: the sysctl is the pod's own
        # network namespace's.
        sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "53"}]
      containers:
      - name: coredns
        image: $DNS_IMAGE
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        resources: {limits: {memory: 128Mi}, requests: {memory: 64Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_SERVICE_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
  if ! kc -n kube-system rollout status deploy/coredns --timeout=90s >/dev/null; then
    echo "cluster: CoreDNS not ready" >&2
    kc -n kube-system logs deploy/coredns >&2 || true
    return 1
  fi
}

stop() {
  local f=$RUN/pid/$1
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

import_tools() { import_binary "$TOOLS_IMAGE" avk8s-tools /pause /probe; }

# import_binary IMAGE BINARY PATH...: an image FROM scratch holding one of
# $BIN's programs at each PATH (the first is the entrypoint), built with
# docker and imported into the cluster's containerd.
import_binary() {
  local image=$1 bin=$2 ctx p
  shift 2
  ctx=$(mktemp -d)
  cp "$BIN/$bin" "$ctx/$bin"
  {
    echo "FROM scratch"
    for p in "$@"; do echo "COPY $bin $p"; done
    echo "ENTRYPOINT [\"$1\"]"
  } >"$ctx/Dockerfile"
  docker build -q -t "$image" "$ctx" >/dev/null
  rm -rf "$ctx"
  import "$image"
}

import() {
  docker save "$@" | inns ctr --address "$RUN/containerd/containerd.sock" -n k8s.io images import -
}

down() {
  if [ -d "$RUN/pid" ]; then
    for c in kube-router kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver; do stop "$c"; done
    # Pods' processes: containerd's shims, killed with the pods' cgroups.
    if [ -S "$RUN/containerd/containerd.sock" ]; then
      for t in $(inns ctr --address "$RUN/containerd/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
        inns ctr --address "$RUN/containerd/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$t" 2>/dev/null || true
      done
      sleep 1
    fi
    stop containerd
    stop etcd
  fi
  pkill_shims
  restore_sysctls
  ip netns del "$NS" 2>/dev/null || true
  local m
  for m in $(grep -o " $RUN/[^ ]*" /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  for m in $(grep -o " $RUN/[^ ]*" /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$RUN"
}

# pkill_shims ends the containerd shims this cluster started, found by
# their -address argument (never by name alone).
pkill_shims() {
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $RUN/containerd/containerd.sock" || true); do
    kill -9 "$pid" 2>/dev/null || true
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  engine) engine "$2" ;;
  import) shift; import "$@" ;;
  # exec: nsenter execs kubectl in turn, so the caller's $! is kubectl itself
  # (a backgrounded port-forward ends with the kill of that pid).
  kubectl) shift; exec nsenter --net="/run/netns/$NS" kubectl --kubeconfig "$KUBECONFIG_FILE" "$@" ;;
  *) echo "usage: $0 up | down | engine on|off | import IMAGE... | kubectl ARGS..." >&2; exit 2 ;;
esac
