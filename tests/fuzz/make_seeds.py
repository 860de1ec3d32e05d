"""Writes the seed corpora and dictionaries of //tests/fuzz and //model fuzz targets.

    bazel run //tests/fuzz:make_seeds -- "$PWD"      # from the workspace root; rewrites the seeds

Seeds are small and meaningful: valid requests and configs, every limit at its edge, and the typical
mistakes (each must be refused with the right field). The output is deterministic, so a re-run
changes nothing unless this script or the protos changed. Regression inputs found by fuzzing are
kept separately (corpus/*/regression-*) and never rewritten here.
"""

import json
import math
import os
import struct
import sys

from google.protobuf import json_format
from google.protobuf import text_format
from rollout.v1 import admin_pb2
from rollout.v1 import config_pb2
from rollout.v1 import rollout_pb2

# Selector bytes (request_fuzzer.cc / reload_config_fuzzer.cc).
GEN_UNARY, GEN_STREAM, SCORE, ABORT, PAUSE, WEIGHTS = 0, 1, 2, 3, 4, 5
MODEL_KNOWN = 8
RELOAD_PROTO, TEXT, TEXT_DRY, JSON_, JSON_DRY = 0, 1, 4, 2, 5


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def gen(**kw):
    sampling = kw.pop("sampling", None)
    logprobs = kw.pop("logprobs", None)
    r = rollout_pb2.GenerateRequest(**kw)
    if sampling is not None:
        r.sampling.CopyFrom(rollout_pb2.SamplingParams(**sampling))
    if logprobs is not None:
        r.logprobs.CopyFrom(rollout_pb2.LogprobOptions(**logprobs))
    return r


def request_seeds(out):
    d = os.path.join(out, "tests/fuzz/corpus/request")
    full = gen(request_id="grpo-step-17-prompt-3", prompt_token_ids=[151644, 872, 198, 3838, 374],
               n=8, sampling=dict(temperature=0.7, top_p=0.95, top_k=50, min_p=0.05, max_tokens=128,
                                  min_tokens=4, stop_token_ids=[151645, 151643], ignore_eos=False,
                                  seed=1234),
               logprobs=dict(sampled=True, top_k=5), replay_ssm=rollout_pb2.REPLAY_SSM_MODE_ON,
               min_weight_version=3)
    seeds = {
        "gen_minimal": (GEN_UNARY, gen(prompt_token_ids=[1, 2, 3], n=1)),
        "gen_full": (GEN_UNARY, full),
        "gen_full_stream": (GEN_STREAM, full),
        "gen_full_model": (GEN_UNARY | MODEL_KNOWN, full),
        "gen_greedy": (GEN_STREAM | MODEL_KNOWN,
                       gen(prompt_token_ids=[5, 6], n=1, sampling=dict(temperature=0, max_tokens=1))),
        # Context edge with a known model (context 4096): prompt of 4095, max_tokens defaulted.
        "gen_context_edge": (GEN_STREAM | MODEL_KNOWN,
                             gen(prompt_token_ids=[7] * 4095, n=2)),
        "gen_max_n": (GEN_STREAM, gen(prompt_token_ids=[9], n=64,
                                      sampling=dict(max_tokens=32768))),
        # Unary response-size limit: n x max_tokens x top-k logprobs over max_response_bytes.
        "gen_response_size": (GEN_UNARY, gen(prompt_token_ids=[1], n=64,
                                             sampling=dict(max_tokens=32768),
                                             logprobs=dict(sampled=True, top_k=20))),
        # Mistakes that must be refused with their field.
        "gen_bad_top_p": (GEN_UNARY, gen(prompt_token_ids=[1], n=1, sampling=dict(top_p=0))),
        "gen_nan_temperature": (GEN_UNARY, gen(prompt_token_ids=[1], n=1,
                                               sampling=dict(temperature=math.nan))),
        "gen_negative_token": (GEN_UNARY | MODEL_KNOWN, gen(prompt_token_ids=[1, -5], n=1)),
        "gen_token_over_vocab": (GEN_UNARY | MODEL_KNOWN, gen(prompt_token_ids=[1000], n=1)),
        "gen_bad_request_id": (GEN_UNARY, gen(request_id="a\nb", prompt_token_ids=[1], n=1)),
        "gen_bad_replay_mode": (GEN_UNARY, gen(prompt_token_ids=[1], n=1, replay_ssm=7)),
        "gen_empty_prompt": (GEN_UNARY, gen(n=1)),
        "gen_min_over_max": (GEN_UNARY, gen(prompt_token_ids=[1], n=1,
                                            sampling=dict(max_tokens=4, min_tokens=5))),
        "score_ok": (SCORE | MODEL_KNOWN, rollout_pb2.ScoreRequest(
            request_id="score-1", prompt_token_ids=[1, 2, 3],
            completions=[rollout_pb2.TokenSequence(token_ids=[4, 5]),
                         rollout_pb2.TokenSequence(token_ids=[6])],
            top_logprobs=3, min_weight_version=1)),
        "score_empty_completion": (SCORE, rollout_pb2.ScoreRequest(
            prompt_token_ids=[1], completions=[rollout_pb2.TokenSequence()])),
        "abort_id": (ABORT, rollout_pb2.AbortRequest(request_id="grpo-step-17-prompt-3")),
        "abort_all": (ABORT, rollout_pb2.AbortRequest(all=True)),
        "abort_all_false": (ABORT, rollout_pb2.AbortRequest(all=False)),
        "pause_keep": (PAUSE, admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_KEEP)),
        "pause_bad_mode": (PAUSE, admin_pb2.PauseRequest(mode=9)),
        "weights_ok": (WEIGHTS, admin_pb2.UpdateWeightsRequest(path="/models/policy/step-200",
                                                               version=200)),
        "weights_relative": (WEIGHTS, admin_pb2.UpdateWeightsRequest(path="step-200")),
    }
    for name, (selector, msg) in sorted(seeds.items()):
        write(d, name, bytes([selector]) + msg.SerializeToString())

    # Dictionary: proto wire values that hit the validation edges.
    entries = {
        "varint_minus_1": b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        "varint_int32_max": b"\xff\xff\xff\xff\x07",
        "float_nan": struct.pack("<f", math.nan),
        "float_inf": struct.pack("<f", math.inf),
        "float_one": struct.pack("<f", 1.0),
        "float_tiny": struct.pack("<f", 1e-45),
        "varint_4096": b"\x80\x20",
        "varint_32768": b"\x80\x80\x02",
    }
    write(os.path.join(out, "tests/fuzz"), "request.dict",
          b"# libFuzzer dictionary of request_fuzzer (made by make_seeds.py)\n" +
          b"".join(b'%s="%s"\n' % (k.encode(), "".join("\\x%02x" % c for c in v).encode())
                   for k, v in sorted(entries.items())))


def config_field_names(descriptor, text_names, json_names, enum_names):
    for field in descriptor.fields:
        text_names.add(field.name)
        json_names.add(field.json_name)
        if field.enum_type is not None:
            enum_names.update(v.name for v in field.enum_type.values)
        if field.message_type is not None:
            config_field_names(field.message_type, text_names, json_names, enum_names)


def config_seeds(out, workspace):
    d = os.path.join(out, "tests/fuzz/corpus/reload_config")
    with open(os.path.join(workspace, "server/config/default.textproto"), "rb") as f:
        default_text = f.read()
    default = text_format.Parse(default_text, config_pb2.ServerConfig())
    hot = config_pb2.ServerConfig()
    hot.admission.max_n = 8
    hot.default_sampling.temperature = 0.6
    hot.replay_ssm.default_mode = rollout_pb2.REPLAY_SSM_MODE_OFF
    hot.model.roots.append("/models")
    restart = config_pb2.ServerConfig()
    restart.listen = "0.0.0.0:50052"
    restart.workers.count = 2
    invalid = config_pb2.ServerConfig()
    invalid.admission.max_n = -1
    invalid.listen = "nowhere"
    # The fuzzer maps a token file whose first byte is even to its own token file, odd to a
    # missing one ('r' = 0x72, 's' = 0x73).
    token = config_pb2.ServerConfig()
    token.security.admin_token_file = "rollout-admin-token"
    token_missing = config_pb2.ServerConfig()
    token_missing.security.admin_token_file = "secrets/admin-token"

    seeds = {
        "text_default": (TEXT, default_text),
        "text_default_dry": (TEXT_DRY, default_text),
        "text_hot": (TEXT, text_format.MessageToString(hot).encode()),
        "text_restart": (TEXT, text_format.MessageToString(restart).encode()),
        "text_invalid": (TEXT, text_format.MessageToString(invalid).encode()),
        "text_token": (TEXT, text_format.MessageToString(token).encode()),
        "text_syntax_error": (TEXT, b"admission { max_n: 8\n"),
        "json_default": (JSON_, json_format.MessageToJson(default).encode()),
        "json_hot_dry": (JSON_DRY, json_format.MessageToJson(hot).encode()),
        "json_unknown_field": (JSON_, b'{"admission": {"maxN": 8, "bogus": 1}}'),
        "reload_hot": (RELOAD_PROTO, admin_pb2.ReloadConfigRequest(config=hot).SerializeToString()),
        "reload_hot_dry": (RELOAD_PROTO, admin_pb2.ReloadConfigRequest(
            config=hot, dry_run=True).SerializeToString()),
        "reload_restart": (RELOAD_PROTO,
                           admin_pb2.ReloadConfigRequest(config=restart).SerializeToString()),
        "reload_invalid": (RELOAD_PROTO,
                           admin_pb2.ReloadConfigRequest(config=invalid).SerializeToString()),
        "reload_token": (RELOAD_PROTO,
                         admin_pb2.ReloadConfigRequest(config=token).SerializeToString()),
        "reload_token_missing": (RELOAD_PROTO, admin_pb2.ReloadConfigRequest(
            config=token_missing).SerializeToString()),
        "reload_from_file": (RELOAD_PROTO, admin_pb2.ReloadConfigRequest().SerializeToString()),
    }
    for name, (selector, data) in sorted(seeds.items()):
        write(d, name, bytes([selector]) + data)

    text_names, json_names, enum_names = set(), set(), set()
    config_field_names(config_pb2.ServerConfig.DESCRIPTOR, text_names, json_names, enum_names)
    words = sorted(text_names | {'"%s"' % n for n in json_names} | enum_names |
                   {"{", "}", ":", "[", "]", "true", "false", "nan", "inf", "-1", "0x7fffffff",
                    "\\\"unix:/tmp/s\\\"", "\\\"[::1]:0\\\""})
    lines = ["# libFuzzer dictionary of reload_config_fuzzer (made by make_seeds.py)"]
    for i, w in enumerate(words):
        lines.append('w%d="%s"' % (i, w.replace('"', '\\"') if not w.startswith('\\') else w))
    write(os.path.join(out, "tests/fuzz"), "config.dict", ("\n".join(lines) + "\n").encode())


def model_seeds(out, workspace):
    d = os.path.join(out, "model/fuzz_corpus/config")
    for model in ("tiny_qwen3_5", "tiny_qwen3_next", "tiny_qwen3_5_moe"):
        with open(os.path.join(workspace, "tests/data", model, "config.json"), "rb") as f:
            write(d, model + ".json", f.read())
    # A real safetensors file made small: the tiny model's header keeps the metadata and the three
    # smallest tensors (offsets rewritten), followed by their real bytes.
    with open(os.path.join(workspace, "tests/data/tiny_qwen3_5/model.safetensors"), "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = sorted((k for k in header if k != "__metadata__"),
                     key=lambda k: (header[k]["data_offsets"][1] - header[k]["data_offsets"][0], k))
    small = {}
    if "__metadata__" in header:
        small["__metadata__"] = header["__metadata__"]
    payload = b""
    for k in tensors[:3]:
        begin, end = header[k]["data_offsets"]
        small[k] = dict(header[k], data_offsets=[len(payload), len(payload) + end - begin])
        payload += data[begin:end]
    text = json.dumps(small, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)   # 8-byte aligned data, as the writers do
    d = os.path.join(out, "model/fuzz_corpus/safetensors")
    write(d, "tiny_qwen3_5_three_tensors.safetensors",
          struct.pack("<Q", len(text)) + text + payload)
    # Edge cases: no tensors, a zero-sized tensor, an empty header.
    empty = b"{}" + b" " * 6
    write(d, "no_tensors.safetensors", struct.pack("<Q", len(empty)) + empty)
    zero = json.dumps({"z": {"dtype": "BF16", "shape": [0, 4], "data_offsets": [0, 0]}}).encode()
    zero += b" " * (-len(zero) % 8)
    write(d, "zero_sized_tensor.safetensors", struct.pack("<Q", len(zero)) + zero)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py <workspace root>")
    workspace = sys.argv[1]
    request_seeds(workspace)
    config_seeds(workspace, workspace)
    model_seeds(workspace, workspace)


if __name__ == "__main__":
    main()
