"""TLS from the server config (security.tls): a plaintext client is refused, a TLS client that
trusts the test CA is served. The self-signed certificate is made at test time with openssl."""

import os
import subprocess
import tempfile
import unittest

import grpc

import health_pb2
from tests.server.rolloutd_process import RolloutdProcess, temp_dir


class TlsTest(unittest.TestCase):
    def test_tls_only(self):
        d = tempfile.mkdtemp(dir=temp_dir())
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        with open(cert, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        config = 'security { tls { cert_file: "%s" key_file: "%s" } }\n' % (cert, key)
        with RolloutdProcess(config_text=config, secure_channel_credentials=credentials) as server:
            response = server.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            self.assertEqual(response.status, health_pb2.HealthCheckResponse.SERVING)
            with grpc.insecure_channel(server.address) as plain:
                stub = health_pb2_grpc_stub(plain)
                with self.assertRaises(grpc.RpcError) as e:
                    stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)


def health_pb2_grpc_stub(channel):
    import health_pb2_grpc
    return health_pb2_grpc.HealthStub(channel)


if __name__ == "__main__":
    unittest.main()
