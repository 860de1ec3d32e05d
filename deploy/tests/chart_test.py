"""Tests of the Helm chart deploy/helm/rollout with the real helm (v4, .tools/bin/helm).

- `helm lint --strict` with the default values and every values file in ci/ (all options together);
- `helm template` output validated against the Kubernetes schemas (kubernetes-models, strict fields;
  ServiceMonitor/PrometheusRule with @kubernetes-models/prometheus-operator) by validate_manifests.mjs;
- probes: native gRPC type, services "" / "rollout.v1.Rollout", periods and thresholds;
- the values -> server config mapping: the rendered config.json parses as rollout.v1.ServerConfig
  (proto3 JSON, unknown fields rejected), `rolloutd --check_config` accepts it, and it agrees with
  the pod spec (ports, mounted files);
- drain timing, GPU resources, volumes, secrets, Services, ServiceMonitor, PDB, dashboard and rules
  embedded byte for byte, and invalid values refused with a clear message.
"""
import base64
import json
import os
import unittest

import yaml
from google.protobuf import json_format

import deploy_env
from deploy_env import run, runfile

CHART = runfile("deploy/helm/rollout")
VALUES_FILES = {
    "default": None,
    "all-options": "ci/all-options-values.yaml",
    "hostpath": "ci/hostpath-values.yaml",
    "emptydir": "ci/emptydir-values.yaml",
    "pvc-existing": "ci/pvc-existing-values.yaml",
}
NAMESPACE = "rl"

def helm_template(values=None, extra=(), check=True):
    cmd = [deploy_env.helm(), "template", "r1", CHART, "--namespace", NAMESPACE]
    if values:
        cmd += ["-f", os.path.join(CHART, values)]
    cmd += list(extra)
    return run(cmd, check=check)


def docs_of(text):
    return [d for d in yaml.safe_load_all(text) if d]


def find(docs, kind, name=None):
    out = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    return out


def one(docs, kind, name=None):
    out = find(docs, kind, name)
    if len(out) != 1:
        raise AssertionError("expected one %s%s, found %d" % (kind, " " + name if name else "", len(out)))
    return out[0]


class ChartTest(unittest.TestCase):
    rendered = {}

    @classmethod
    def setUpClass(cls):
        deploy_env.helm()  # fails with the install hint if missing
        for key, values in VALUES_FILES.items():
            cls.rendered[key] = helm_template(values).stdout

    def docs(self, key):
        return docs_of(self.rendered[key])

    def pod(self, key):
        return one(self.docs(key), "Deployment")["spec"]["template"]

    def container(self, key):
        cs = self.pod(key)["spec"]["containers"]
        self.assertEqual([c["name"] for c in cs], ["rolloutd"])
        return cs[0]

    def server_config(self, key):
        cms = [d for d in self.docs(key) if d["kind"] == "ConfigMap" and "config.json" in d.get("data", {})]
        self.assertEqual(len(cms), 1)
        return cms[0], json.loads(cms[0]["data"]["config.json"])

    # ---------------------------------------------------------------- helm lint
    def test_lint_strict(self):
        for key, values in VALUES_FILES.items():
            with self.subTest(values=key):
                cmd = [deploy_env.helm(), "lint", "--strict", CHART, "--namespace", NAMESPACE]
                if values:
                    cmd += ["-f", os.path.join(CHART, values)]
                p = run(cmd)
                self.assertIn("0 chart(s) failed", p.stdout)
                self.assertNotIn("[WARNING]", p.stdout)
                self.assertNotIn("[ERROR]", p.stdout)

    # ---------------------------------------------------------------- schemas
    def test_rendered_manifests_validate_against_kubernetes_schemas(self):
        paths = []
        for key in VALUES_FILES:
            path = os.path.join(deploy_env.tmpdir(), "rendered-%s.yaml" % key)
            with open(path, "w") as f:
                f.write(self.rendered[key])
            paths.append(path)
        p = run([deploy_env.node(), runfile("deploy/tests/validate_manifests.mjs"),
                 "--node-modules", deploy_env.node_modules()] + paths, check=False)
        self.assertEqual(p.returncode, 0, "manifest validation failed:\n" + p.stdout + p.stderr)
        self.assertNotIn("FAIL", p.stdout)
        self.assertNotIn("skip", p.stdout)  # no kind goes unchecked
        n = sum(len(self.docs(k)) for k in VALUES_FILES)
        self.assertIn("%d checked, 0 failed" % n, p.stdout)

    def test_validator_rejects_planted_errors(self):
        """The validator itself catches type errors, missing fields, unknown fields and unknown kinds."""
        bad = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: two
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - {name: c, image: i, ports: [{name: x}], readinesProbe: {grpc: {port: 1}}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: bad}
spec: {selector: {}, endpoints: [{port: metrics, intervall: 30s}]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: bad}
"""
        path = os.path.join(deploy_env.tmpdir(), "bad.yaml")
        with open(path, "w") as f:
            f.write(bad)
        p = run([deploy_env.node(), runfile("deploy/tests/validate_manifests.mjs"),
                 "--node-modules", deploy_env.node_modules(), path], check=False)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("replicas must be integer", p.stdout)
        self.assertIn("must have required property containerPort", p.stdout)
        self.assertIn("readinesProbe: unknown field", p.stdout)
        self.assertIn("intervall: unknown field", p.stdout)
        self.assertIn("no schema for example.com/v1 Widget", p.stdout)

    def test_expected_objects(self):
        kinds = sorted((d["kind"], d["metadata"]["name"]) for d in self.docs("all-options"))
        self.assertEqual(kinds, sorted([
            ("ConfigMap", "r1-rl-config"), ("ConfigMap", "r1-rl-dashboard"), ("Deployment", "r1-rl"),
            ("PersistentVolumeClaim", "r1-rl-model"), ("PodDisruptionBudget", "r1-rl"),
            ("PrometheusRule", "r1-rl"), ("Service", "r1-rl"), ("Service", "r1-rl-headless"),
            ("ServiceAccount", "rollout-sa"), ("ServiceMonitor", "r1-rl")]))
        kinds = sorted(d["kind"] for d in self.docs("default"))
        self.assertEqual(kinds, ["ConfigMap", "Deployment", "Secret", "Service", "ServiceAccount"])

    # ---------------------------------------------------------------- probes
    def test_probes_are_native_grpc_with_the_right_services(self):
        for key in VALUES_FILES:
            with self.subTest(values=key):
                c = self.container(key)
                ports = {p["name"]: p["containerPort"] for p in c["ports"]}
                tls = "health" in ports
                want_port = ports["health"] if tls else ports["grpc"]
                expected = {"startupProbe": "", "readinessProbe": "rollout.v1.Rollout", "livenessProbe": ""}
                self.assertIn("readinessProbe", c)
                for probe, service in expected.items():
                    if probe not in c:
                        continue
                    p = c[probe]
                    self.assertEqual(set(p) & {"httpGet", "tcpSocket", "exec", "grpc"}, {"grpc"}, probe)
                    self.assertEqual(p["grpc"]["service"], service, probe)
                    self.assertEqual(p["grpc"]["port"], want_port, probe)

    def test_probe_timing(self):
        c = self.container("default")
        self.assertEqual(c["readinessProbe"]["periodSeconds"], 5)
        self.assertEqual(c["livenessProbe"]["periodSeconds"], 10)
        self.assertEqual(c["livenessProbe"]["failureThreshold"], 3)
        s = c["startupProbe"]
        budget = s.get("initialDelaySeconds", 0) + s["periodSeconds"] * s["failureThreshold"]
        # At least the workers' default model-load budget (WorkersConfig.startup_timeout_seconds: 600).
        self.assertGreaterEqual(budget, 600)
        # hostpath: startup and liveness disabled, readiness kept.
        c = self.container("hostpath")
        self.assertNotIn("startupProbe", c)
        self.assertNotIn("livenessProbe", c)
        self.assertIn("readinessProbe", c)

    # ---------------------------------------------------------------- server config
    def test_server_config_parses_as_ServerConfig(self):
        from rollout.v1 import config_pb2
        for key in VALUES_FILES:
            with self.subTest(values=key):
                _, cfg = self.server_config(key)
                ports = {p["name"]: p["containerPort"] for p in self.container(key)["ports"]}
                msg = json_format.Parse(json.dumps(cfg), config_pb2.ServerConfig(), ignore_unknown_fields=False)
                self.assertTrue(msg.listen)
                # TLS moves the probes to a plaintext health-only listener (kubelet's gRPC probes
                # cannot speak TLS): the container's health port is what health_listen binds.
                if "health" in ports:
                    self.assertEqual(msg.health_listen, "0.0.0.0:%d" % ports["health"])
                else:
                    self.assertEqual(msg.health_listen, "")

    def test_rolloutd_accepts_the_rendered_config(self):
        """`rolloutd --check_config` on the ConfigMap's config.json of every values variant: the
        chart cannot emit a config the server would refuse at start-up. The admin token file is a
        Secret mounted in the pod; check_config reads it, so a stand-in file with a token takes
        its place (TLS files are only paths to rolloutd until it serves)."""
        from rollout.v1 import config_pb2
        rolloutd = runfile("server/rolloutd")
        for key in VALUES_FILES:
            with self.subTest(values=key):
                _, cfg = self.server_config(key)
                security = cfg.get("security", {})
                if "admin_token_file" in security:
                    token = os.path.join(deploy_env.tmpdir(), "admin-token-%s" % key)
                    with open(token, "w") as f:
                        f.write("chart-test-token\n")
                    security["admin_token_file"] = token
                path = os.path.join(deploy_env.tmpdir(), "config-%s.json" % key)
                with open(path, "w") as f:
                    json.dump(cfg, f)
                p = run([rolloutd, "--check_config", "--config=" + path], check=False)
                self.assertEqual(p.returncode, 0, "rolloutd refused the %s config:\n%s%s" %
                                 (key, p.stdout, p.stderr))
                # It printed the config with the defaults filled in, the chart's values kept.
                self.assertIn('listen: "%s"' % cfg["listen"], p.stdout)
                self.assertIn("count: %d" % cfg["workers"]["count"], p.stdout)
                self.assertIn("shutdown_grace_seconds: %d" % cfg["shutdown_grace_seconds"],
                              p.stdout)

    def test_server_config_agrees_with_the_pod(self):
        for key in VALUES_FILES:
            with self.subTest(values=key):
                cm, cfg = self.server_config(key)
                pod = self.pod(key)
                c = self.container(key)
                ports = {p["name"]: p["containerPort"] for p in c["ports"]}
                self.assertEqual(cfg["listen"], "0.0.0.0:%d" % ports["grpc"])
                self.assertEqual(cfg["metrics_listen"], "0.0.0.0:%d" % ports["metrics"])
                if "health" in ports:
                    self.assertEqual(cfg["health_listen"], "0.0.0.0:%d" % ports["health"])
                volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
                mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
                # --config points at the mounted ConfigMap.
                cfg_args = [a for a in c["args"] if a.startswith("--config=")]
                self.assertEqual(len(cfg_args), 1)
                cfg_dir, cfg_file = os.path.split(cfg_args[0][len("--config="):])
                self.assertEqual(cfg_file, "config.json")
                self.assertEqual(volumes[mounts[cfg_dir]]["configMap"]["name"], cm["metadata"]["name"])

                def secret_file(path):
                    """(secret name, key) mounted at `path`, via a secret volume with items."""
                    d, f = os.path.split(path)
                    vol = volumes[mounts[d]]
                    items = {i["path"]: i["key"] for i in vol["secret"]["items"]}
                    return vol["secret"]["secretName"], items[f]

                sec = cfg.get("security", {})
                if "admin_token_file" in sec:
                    name, k = secret_file(sec["admin_token_file"])
                    secrets = {d["metadata"]["name"]: d for d in self.docs(key) if d["kind"] == "Secret"}
                    if name in secrets:  # created by the chart (else an existing Secret)
                        self.assertIn(k, secrets[name]["data"])
                for f in ("cert_file", "key_file", "client_ca_file"):
                    if f in sec.get("tls", {}):
                        secret_file(sec["tls"][f])
                if "model" in cfg:
                    model_mount = [m for m in mounts if cfg["model"]["path"].startswith(m + "/")]
                    self.assertEqual(len(model_mount), 1, "model.path must be under the model volume")

    def test_server_config_values(self):
        _, cfg = self.server_config("default")
        self.assertEqual(cfg["workers"], {"count": 1})
        self.assertEqual(cfg["shutdown_grace_seconds"], 600)
        self.assertNotIn("model", cfg)  # embedded model
        _, cfg = self.server_config("all-options")
        # config.server is merged; chart-coupled fields win (listen), overridable defaults do not.
        self.assertEqual(cfg["listen"], "0.0.0.0:8443")
        self.assertEqual(cfg["workers"], {"count": 8, "startup_timeout_seconds": 1800})
        self.assertEqual(cfg["health"], {"watchdog_seconds": 120})
        self.assertEqual(cfg["model"], {"path": "/models/Qwen3-Next-80B-A3B-Instruct", "roots": ["/models"]})
        self.assertEqual(cfg["security"]["tls"]["require_client_cert"], True)
        self.assertEqual(cfg["shutdown_grace_seconds"], 1800)
        _, cfg = self.server_config("hostpath")
        self.assertNotIn("security", cfg)  # admin token disabled, no TLS
        self.assertEqual(cfg["workers"], {"count": 1})  # gpu.count 0: one CPU worker

    def test_config_checksum_restarts_pods(self):
        ann = self.pod("default")["metadata"]["annotations"]
        self.assertIn("checksum/config", ann)
        other = docs_of(helm_template(extra=["--set", "config.server.health.watchdog_seconds=5"]).stdout)
        ann2 = one(other, "Deployment")["spec"]["template"]["metadata"]["annotations"]
        self.assertNotEqual(ann["checksum/config"], ann2["checksum/config"])
        # restartOnChange: false (hot reload): no checksum.
        self.assertNotIn("checksum/config", self.pod("all-options")["metadata"]["annotations"])

    # ---------------------------------------------------------------- pod spec
    def test_gpu_resources_and_scheduling(self):
        c, pod = self.container("default"), self.pod("default")["spec"]
        self.assertEqual(c["resources"]["limits"]["nvidia.com/gpu"], 1)
        self.assertNotIn("runtimeClassName", pod)
        c, pod = self.container("all-options"), self.pod("all-options")["spec"]
        self.assertEqual(c["resources"]["limits"]["nvidia.com/gpu"], 8)
        self.assertEqual(c["resources"]["limits"]["memory"], "512Gi")
        self.assertEqual(pod["runtimeClassName"], "nvidia")
        self.assertEqual(pod["tolerations"][0]["key"], "nvidia.com/gpu")
        self.assertIn("nodeSelector", pod)
        self.assertIn("podAntiAffinity", pod["affinity"])
        c = self.container("hostpath")
        self.assertNotIn("nvidia.com/gpu", c["resources"].get("limits", {}))
        mig = docs_of(helm_template(extra=["--set", "gpu.resourceName=nvidia.com/mig-3g.40gb",
                                           "--set", "gpu.count=2"]).stdout)
        limits = one(mig, "Deployment")["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        self.assertEqual(limits["nvidia.com/mig-3g.40gb"], 2)

    def test_security_context(self):
        for key in VALUES_FILES:
            with self.subTest(values=key):
                pod = self.pod(key)["spec"]
                c = self.container(key)
                self.assertTrue(pod["securityContext"]["runAsNonRoot"])
                self.assertNotEqual(pod["securityContext"]["runAsUser"], 0)
                self.assertFalse(c["securityContext"]["allowPrivilegeEscalation"])
                self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
                self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
                self.assertFalse(pod["automountServiceAccountToken"])
                # A writable /tmp for the workers' unix sockets (root filesystem is read-only).
                self.assertIn("/tmp", {m["mountPath"] for m in c["volumeMounts"]})

    def test_drain_and_termination_grace(self):
        pod, c = self.pod("default")["spec"], self.container("default")
        _, cfg = self.server_config("default")
        sleep = c["lifecycle"]["preStop"]["sleep"]["seconds"]
        self.assertEqual(sleep, 15)
        self.assertEqual(pod["terminationGracePeriodSeconds"], sleep + cfg["shutdown_grace_seconds"] + 30)
        pod, c = self.pod("all-options")["spec"], self.container("all-options")
        self.assertEqual(c["lifecycle"]["preStop"]["exec"]["command"], ["/bin/sh", "-c", "sleep 20"])
        self.assertEqual(pod["terminationGracePeriodSeconds"], 1900)
        self.assertNotIn("lifecycle", self.container("hostpath"))
        self.assertEqual(self.pod("hostpath")["spec"]["terminationGracePeriodSeconds"], 60 + 30)

    def test_model_volumes(self):
        def model_volume(key):
            vols = [v for v in self.pod(key)["spec"]["volumes"] if v["name"] == "model"]
            return vols[0] if vols else None

        self.assertIsNone(model_volume("default"))
        self.assertEqual(model_volume("all-options")["persistentVolumeClaim"]["claimName"], "r1-rl-model")
        pvc = one(self.docs("all-options"), "PersistentVolumeClaim")
        self.assertEqual(pvc["spec"]["accessModes"], ["ReadOnlyMany"])
        self.assertEqual(pvc["spec"]["resources"]["requests"]["storage"], "500Gi")
        self.assertEqual(model_volume("pvc-existing")["persistentVolumeClaim"],
                         {"claimName": "models-rox", "readOnly": True})
        self.assertEqual(model_volume("hostpath")["hostPath"], {"path": "/data/models", "type": "Directory"})
        self.assertEqual(model_volume("emptydir")["emptyDir"], {"sizeLimit": "100Gi"})
        init = self.pod("emptydir")["spec"]["initContainers"]
        self.assertEqual(init[0]["name"], "fetch-model")
        mount = [m for m in self.container("all-options")["volumeMounts"] if m["name"] == "model"][0]
        self.assertEqual(mount, {"name": "model", "mountPath": "/models", "readOnly": True})

    def test_admin_token_secret(self):
        s = one(self.docs("default"), "Secret")
        token = base64.b64decode(s["data"]["token"]).decode()
        self.assertEqual(len(token), 40)
        self.assertEqual(s["metadata"]["annotations"]["helm.sh/resource-policy"], "keep")
        s = one(self.docs("emptydir"), "Secret")
        self.assertEqual(base64.b64decode(s["data"]["token"]).decode(), "fixed-test-token")
        self.assertEqual(find(self.docs("all-options"), "Secret"), [])  # existingSecret
        self.assertEqual(find(self.docs("hostpath"), "Secret"), [])  # disabled

    def test_tls_mounts(self):
        vols = {v["name"]: v for v in self.pod("all-options")["spec"]["volumes"]}
        self.assertEqual(vols["tls"]["secret"]["secretName"], "rollout-tls")
        self.assertEqual(vols["client-ca"]["secret"]["secretName"], "trainer-ca")
        vols = {v["name"]: v for v in self.pod("emptydir")["spec"]["volumes"]}
        self.assertNotIn("client-ca", vols)
        self.assertEqual([i["key"] for i in vols["tls"]["secret"]["items"]], ["tls.crt", "tls.key"])

    # ---------------------------------------------------------------- services and monitoring
    def test_services(self):
        docs = self.docs("all-options")
        pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
        ports = {p["name"]: p["containerPort"] for p in self.container("all-options")["ports"]}
        main = one(docs, "Service", "r1-rl")
        self.assertEqual({p["name"]: p["port"] for p in main["spec"]["ports"]},
                         {"grpc": ports["grpc"], "metrics": ports["metrics"]})
        headless = one(docs, "Service", "r1-rl-headless")
        self.assertEqual(headless["spec"]["clusterIP"], "None")
        self.assertFalse(headless["spec"]["publishNotReadyAddresses"])
        for svc in (main, headless):
            for p in svc["spec"]["ports"]:
                self.assertIn(p["targetPort"], ports)
            for k, v in svc["spec"]["selector"].items():
                self.assertEqual(pod_labels.get(k), v)
        self.assertEqual(find(self.docs("default"), "Service", "r1-rollout-headless"), [])

    def test_service_monitor_selects_the_metrics_service_only(self):
        docs = self.docs("all-options")
        sm = one(docs, "ServiceMonitor")
        self.assertEqual(sm["metadata"]["namespace"], "monitoring")
        self.assertEqual(sm["metadata"]["labels"]["release"], "kube-prometheus-stack")
        self.assertEqual(sm["spec"]["namespaceSelector"]["matchNames"], [NAMESPACE])
        ep = sm["spec"]["endpoints"][0]
        self.assertEqual((ep["port"], ep["path"], ep["interval"], ep["scrapeTimeout"]),
                         ("metrics", "/metrics", "30s", "20s"))
        selected = [s["metadata"]["name"] for s in find(docs, "Service")
                    if all(s["metadata"]["labels"].get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items())]
        self.assertEqual(selected, ["r1-rl"])

    def test_pod_disruption_budget(self):
        pdb = one(self.docs("all-options"), "PodDisruptionBudget")
        self.assertEqual(pdb["spec"]["minAvailable"], 2)
        self.assertNotIn("maxUnavailable", pdb["spec"])
        pdb = one(self.docs("hostpath"), "PodDisruptionBudget")
        self.assertEqual(pdb["spec"]["maxUnavailable"], "25%")

    def test_dashboard_configmap_embeds_the_dashboard_file(self):
        cm = one(self.docs("all-options"), "ConfigMap", "r1-rl-dashboard")
        self.assertEqual(cm["metadata"]["labels"]["grafana_dashboard"], "1")
        self.assertEqual(cm["metadata"]["annotations"]["grafana_folder"], "RL")
        with open(runfile("deploy/grafana/rollout-dashboard.json")) as f:
            self.assertEqual(cm["data"]["rollout-dashboard.json"], f.read().rstrip("\n"))
        # One copy only: the chart's file is a link to deploy/grafana/.
        link = os.path.join(deploy_env.workspace_root(), "deploy/helm/rollout/files/rollout-dashboard.json")
        self.assertTrue(os.path.islink(link), link)
        self.assertEqual(os.readlink(link), "../../../grafana/rollout-dashboard.json")

    def test_prometheus_rule_embeds_the_rules_file(self):
        pr = one(self.docs("all-options"), "PrometheusRule")
        with open(runfile("deploy/prometheus/rollout-rules.yaml")) as f:
            self.assertEqual(pr["spec"], yaml.safe_load(f))
        link = os.path.join(deploy_env.workspace_root(), "deploy/helm/rollout/files/rollout-rules.yaml")
        self.assertTrue(os.path.islink(link), link)

    def test_package_carries_the_linked_files(self):
        """`helm package` copies the linked dashboard and rules into the chart archive; ci/ stays out."""
        import tarfile
        out = os.path.join(deploy_env.tmpdir(), "package")
        os.makedirs(out, exist_ok=True)
        run([deploy_env.helm(), "package", CHART, "--destination", out])
        (archive,) = [f for f in os.listdir(out) if f.endswith(".tgz")]
        with tarfile.open(os.path.join(out, archive)) as tar:
            names = tar.getnames()
            dash = tar.extractfile("rollout/files/rollout-dashboard.json").read().decode()
        with open(runfile("deploy/grafana/rollout-dashboard.json")) as f:
            self.assertEqual(dash, f.read())
        self.assertIn("rollout/files/rollout-rules.yaml", names)
        self.assertIn("rollout/values.schema.json", names)
        self.assertFalse([n for n in names if n.startswith("rollout/ci/")])

    # ---------------------------------------------------------------- refused values
    def test_invalid_values_are_refused(self):
        cases = [
            (["--set", "model.volume.type=pvc"], "set model.volume.pvc.existingClaim"),
            (["--set", "model.volume.type=hostPath"], "set model.volume.hostPath.path"),
            (["--set", "tls.enabled=true"], "set tls.secretName"),
            (["--set", "terminationGracePeriodSeconds=100"], "shorter than the preStop sleep"),
            (["--set", "drain.preStop.type=exec"], "set drain.preStop.command"),
            (["--kube-version", "1.29.0"], "needs Kubernetes >= 1.30"),
            (["--kube-version", "1.26.0"], "kubeVersion"),
            (["--set", "model.volume.type=nfs"], "model/volume/type"),
            (["--set", "gpus=2"], "gpus"),
            (["--set", "drain.timeoutSeconds=4000"], "drain/timeoutSeconds"),
            (["--set", "gpu.count=-1"], "gpu/count"),
            (["--set", "probes.readiness.periodSeconds=0"], "probes/readiness/periodSeconds"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                p = helm_template(extra=extra, check=False)
                self.assertNotEqual(p.returncode, 0, "accepted: %s" % extra)
                self.assertIn(message, p.stderr)
        # Kubernetes 1.29 works without the sleep hook.
        helm_template(extra=["--kube-version", "1.29.0", "--set", "drain.preStop.type=none"])


if __name__ == "__main__":
    deploy_env.main()
