"""PyTorch's in-place x *= c on 2 GiB of fp32 (the peers' RMW ceiling), with
copy and read for reference, timed with CUDA events (median of 15 after 3
warm-ups), plus the kernel torch launches for mul_. Run on the GPU machine:
    python3 bench/torch_rmw.py
"""
import statistics

import torch


def timed(fn, reps=15, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    n = 2**29  # 2 GiB of fp32
    nbytes = 4 * n
    x = torch.empty(n, device="cuda").uniform_(-1.0, 1.0)
    y = torch.empty_like(x)
    rows = []
    ms = timed(lambda: y.copy_(x))
    rows.append(("torch copy_ (2 GiB)", 2 * nbytes / ms / 1e6, ms))
    ms = timed(lambda: x.mul_(0.9999))
    rows.append(("torch mul_ in place (x *= c)", 2 * nbytes / ms / 1e6, ms))
    ms = timed(lambda: x.add_(1e-4))
    rows.append(("torch add_ in place", 2 * nbytes / ms / 1e6, ms))
    ms = timed(lambda: torch.mul(x, 0.9999, out=y))
    rows.append(("torch mul out of place", 2 * nbytes / ms / 1e6, ms))
    ms = timed(lambda: x.sum())
    rows.append(("torch sum (read)", nbytes / ms / 1e6, ms))
    for name, gbps, ms in rows:
        print(f"torch {name:34s} {ms:8.3f} ms {gbps:7.0f} GB/s")
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            x.mul_(0.9999)
            torch.cuda.synchronize()
        for ev in prof.key_averages():
            if ev.device_type is not None and "mul" in ev.key.lower():
                print("torch mul_ kernel:", ev.key[:160])
    except Exception as e:  # the profiler is optional
        print("torch profiler unavailable:", e)


if __name__ == "__main__":
    main()
