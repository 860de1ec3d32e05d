// ROLLOUT_HD marks index-math helpers that kernels and host tests share
// (fast_div.h, prefill_chunk_map.h): host and device, inlined, under nvcc;
// plain inline functions in host-only builds (the tests).
#ifndef ROLLOUT_GDN_HOST_DEVICE_H_
#define ROLLOUT_GDN_HOST_DEVICE_H_

#ifdef __CUDACC__
#define ROLLOUT_HD __host__ __device__ __forceinline__
#else
#define ROLLOUT_HD inline
#endif

#endif  // ROLLOUT_GDN_HOST_DEVICE_H_
