"""TLS from the server config (security.tls): a plaintext client is refused, a TLS client that
trusts the test CA is served. The self-signed certificate is made at test time with openssl.
With health_listen, a plaintext listener serves grpc.health.v1 only (kubelet's gRPC probes cannot
speak TLS), with the same statuses as the TLS listener, through the drain."""

import os
import signal
import subprocess
import tempfile
import unittest

import grpc

import health_pb2
from rollout.v1 import rollout_pb2
from rollout.v1 import rollout_pb2_grpc
from tests.server.rolloutd_process import RolloutdProcess, metric_value, temp_dir, wait_for


def self_signed():
    """(cert path, key path, client credentials trusting the cert)."""
    d = tempfile.mkdtemp(dir=temp_dir())
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    with open(cert, "rb") as f:
        return cert, key, grpc.ssl_channel_credentials(root_certificates=f.read())


def check(channel, service):
    return health_pb2_grpc_stub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=10).status


class TlsTest(unittest.TestCase):
    def test_tls_only(self):
        cert, key, credentials = self_signed()
        config = 'security { tls { cert_file: "%s" key_file: "%s" } }\n' % (cert, key)
        with RolloutdProcess(config_text=config, secure_channel_credentials=credentials) as server:
            response = server.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            self.assertEqual(response.status, health_pb2.HealthCheckResponse.SERVING)
            with grpc.insecure_channel(server.address) as plain:
                stub = health_pb2_grpc_stub(plain)
                with self.assertRaises(grpc.RpcError) as e:
                    stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertIsNone(server.health_address)

    def test_plaintext_health_listener_mirrors_health(self):
        cert, key, credentials = self_signed()
        config = ('security { tls { cert_file: "%s" key_file: "%s" } }\n'
                  'health_listen: "127.0.0.1:0"\nshutdown_grace_seconds: 5\n' % (cert, key))
        server = RolloutdProcess(config_text=config, secure_channel_credentials=credentials,
                                 health_line=True)
        server.start()
        try:
            self.assertNotEqual(server.health_address, server.address)
            with grpc.insecure_channel(server.health_address) as plain:
                serving = health_pb2.HealthCheckResponse.SERVING
                self.assertEqual(check(plain, ""), serving)
                # Readiness mirrors the TLS listener's ("rollout.v1.Rollout": SERVING once the
                # worker is ready).
                self.assertTrue(wait_for(lambda: check(plain, "rollout.v1.Rollout") == serving, 60))
                self.assertEqual(check(server.channel, "rollout.v1.Rollout"), serving)
                # Only health: the Rollout service is not there.
                with self.assertRaises(grpc.RpcError) as e:
                    rollout_pb2_grpc.RolloutStub(plain).GetServerInfo(
                        rollout_pb2.GetServerInfoRequest(), timeout=10)
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
                # The TLS listener still refuses plaintext.
                with grpc.insecure_channel(server.address) as tls_port:
                    with self.assertRaises(grpc.RpcError) as e:
                        check(tls_port, "")
                    self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
                # Draining: a long request keeps rolloutd in its grace period while the health
                # listener answers NOT_SERVING (probes see the drain).
                request = rollout_pb2.GenerateRequest(prompt_token_ids=[1, 2, 3], n=64)
                request.sampling.max_tokens = 4000
                request.sampling.ignore_eos = True
                call = server.rollout.Generate.future(request, timeout=60)
                running = wait_for(lambda: metric_value(
                    server.metrics_text(), "rollout_requests_running", {"worker": "0"}) == 1, 30)
                self.assertTrue(running, "not running: %s %s" % (
                    call.exception() if call.done() else "call pending",
                    [l for l in server.metrics_text().splitlines() if "running" in l]))
                server.process.send_signal(signal.SIGTERM)
                self.assertTrue(wait_for(
                    lambda: check(plain, "rollout.v1.Rollout") == health_pb2.HealthCheckResponse.NOT_SERVING,
                    4, interval=0.05))
                self.assertEqual(check(plain, ""), health_pb2.HealthCheckResponse.NOT_SERVING)
                self.assertEqual(server.process.wait(30), 0)
                # 64 x 4000 tokens outlast the 5 s grace: cancelled at its end.
                with self.assertRaises(grpc.RpcError):
                    call.result()
        finally:
            if server.process.poll() is None:
                server.stop()


def health_pb2_grpc_stub(channel):
    import health_pb2_grpc
    return health_pb2_grpc.HealthStub(channel)


if __name__ == "__main__":
    unittest.main()
