"""The admin token never leaves rolloutd: a real rolloutd with security.admin_token_file, admin calls
with the right token, a wrong one, near-misses (one character off, a prefix, the token plus a
character, the wrong scheme), the token sent on data-plane calls, a reload that rotates the token
file and one that names a broken token file. None of the token strings may appear in rolloutd's
stdout or stderr (its workers' output included), in /metrics, in GetServerInfo, or in any
ReloadConfig response, status message or trailing metadata.
"""

import os
import secrets
import signal
import unittest

import grpc

from rollout.v1 import admin_pb2
from rollout.v1 import rollout_pb2
from tests.server.rolloutd_process import RolloutdProcess, write_temp

Outcome = admin_pb2.ConfigFieldChange


def bearer(token):
    return [("authorization", "Bearer " + token)]


class TokenHygieneTest(unittest.TestCase):
    def setUp(self):
        # Random per run, so a match can only come from a leak.
        self.token_a = "adm-" + secrets.token_hex(16)
        self.token_b = "adm-" + secrets.token_hex(16)
        self.token_file = write_temp("admin-token", self.token_a + "\n")
        self.secrets = {
            "token A": self.token_a,
            "token B": self.token_b,
            # What a leak of part of the token would show.
            "token A, core": self.token_a[4:20],
            "token B, core": self.token_b[4:20],
        }
        self.server = RolloutdProcess(
            config_text='admission { max_n: 16 }\nsecurity { admin_token_file: "%s" }\n' %
            self.token_file)
        self.server.start()
        self.addCleanup(self.server.stop)
        self.seen = []  # every text rolloutd sent back, checked at the end

    def record_response(self, response):
        self.seen.append(str(response))
        self.seen.append(response.SerializeToString().decode("latin-1"))

    def record_error(self, error):
        self.seen.append(error.details() or "")
        for key, value in error.trailing_metadata() or ():
            self.seen.append(key)
            self.seen.append(value.decode("latin-1") if isinstance(value, bytes) else value)

    def call(self, rpc, request, metadata=None, expect=grpc.StatusCode.OK):
        """Calls `rpc`, asserts the code, records what came back (trailers included)."""
        try:
            response, call = rpc.with_call(request, timeout=30, metadata=metadata)
        except grpc.RpcError as e:
            self.record_error(e)
            self.assertEqual(e.code(), expect, e.details())
            return e
        self.assertEqual(expect, grpc.StatusCode.OK)
        self.record_response(response)
        for key, value in call.trailing_metadata() or ():
            self.seen.append(value.decode("latin-1") if isinstance(value, bytes) else value)
        return response

    def reload(self, metadata, expect=grpc.StatusCode.OK, dry_run=False):
        return self.call(self.server.admin.ReloadConfig,
                         admin_pb2.ReloadConfigRequest(dry_run=dry_run), metadata, expect)

    def info(self, metadata=None):
        return self.call(self.server.rollout.GetServerInfo, rollout_pb2.GetServerInfoRequest(),
                         metadata)

    def assert_no_secret(self, where, text):
        for name, secret in self.secrets.items():
            self.assertNotIn(secret, text, "%s found in %s" % (name, where))

    def test_token_never_appears(self):
        a = self.token_a
        unauthenticated = grpc.StatusCode.UNAUTHENTICATED
        near_misses = [
            a[:-1] + ("0" if a[-1] != "0" else "1"),  # last character off
            a[:-1],  # a prefix
            a + "x",  # one character more
            a.upper(),
        ]
        self.secrets.update({"near miss %d" % i: t for i, t in enumerate(near_misses)})
        # Right token: every admin RPC works.
        self.assertFalse(self.reload(bearer(a), dry_run=True).applied)
        self.call(self.server.admin.Pause, admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_KEEP),
                  bearer(a))
        self.call(self.server.admin.Resume, admin_pb2.ResumeRequest(), bearer(a))
        # Wrong tokens, near-misses, a wrong scheme, no token.
        for token in near_misses + ["wrong-" + secrets.token_hex(8)]:
            self.reload(bearer(token), unauthenticated)
        self.reload([("authorization", "Basic " + a)], unauthenticated)
        self.reload([("authorization", a)], unauthenticated)
        self.reload(None, unauthenticated)
        self.call(self.server.admin.UpdateWeights, admin_pb2.UpdateWeightsRequest(path="/tmp"),
                  bearer(near_misses[0]), unauthenticated)
        # The token on data-plane calls is ignored and not echoed.
        self.info(bearer(a))
        self.call(self.server.rollout.Generate,
                  rollout_pb2.GenerateRequest(prompt_token_ids=[1], n=99), bearer(a),
                  grpc.StatusCode.INVALID_ARGUMENT)

        # Rotate: the file now holds token B; the reload (authorised by A) reports the change
        # redacted, then only B works.
        with open(self.token_file, "w") as f:
            f.write(self.token_b + "\n")
        report = self.reload(bearer(a))
        self.assertTrue(report.applied)
        change = {c.field: c for c in report.changes}["security.admin_token"]
        self.assertEqual((change.old_value, change.new_value), ("<redacted>", "<redacted>"))
        self.reload(bearer(a), unauthenticated)
        self.assertFalse(self.reload(bearer(self.token_b)).applied)

        # A token file that is not a token (two words, one of them A): rejected, the message names
        # the field and holds neither word.
        with open(self.token_file, "w") as f:
            f.write(a + " " + self.token_b + "\n")
        error = self.reload(bearer(self.token_b), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("security.admin_token_file", error.details())
        with open(self.token_file, "w") as f:
            f.write(self.token_b + "\n")
        self.assertFalse(self.reload(bearer(self.token_b)).applied)

        self.info()
        metrics = self.server.metrics_text()
        self.assertIn("rollout_config_reloads_total", metrics)
        self.assertEqual(self.server.stop(signal.SIGTERM), 0)
        stdout = self.server.process.stdout.read()

        self.assert_no_secret("responses, status messages and trailers", "\n".join(self.seen))
        self.assert_no_secret("/metrics", metrics)
        self.assert_no_secret("stdout", stdout)
        self.assert_no_secret("stderr", self.server.stderr_text())
        # The checks above looked at real output.
        self.assertIn("draining", self.server.stderr_text())
        self.assertTrue(any("security.admin_token" in text for text in self.seen))


if __name__ == "__main__":
    unittest.main()
