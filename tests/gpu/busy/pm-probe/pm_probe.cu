// Device probe for issue 23: which PM-sampling metric set samples in one pass on this GPU, whether the
// values are sane under known workloads, and which clock the sample timestamps are on.
// usage: pm_probe SET INTERVAL_NS CLOCKMODE(mono|default) OUTPREFIX
// SET is full, plain, min, or a comma-separated list of metric names (tests/gpu/busy/pm-probe/sets.sh).
// Prints the set's pass count, runs FMA, HMMA, DMMA, copy, pointer-chase kernels and 512 MiB pinned
// copies each way (and 512 MiB x 4 each way to device 1 where it is a peer), and writes the samples (OUTPREFIX-samples.csv) and the work's times (-events.csv).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <mma.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
using namespace nvcuda;

#define CK(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s_; cuptiGetResultString(r_, &s_); fprintf(stderr, "FAIL %s: %d %s\n", #x, r_, s_); return r_; } } while (0)
#define CU(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "CUDA %s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

#define CKN(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s_; cuptiGetResultString(r_, &s_); fprintf(stderr, "REFUSED %s: %d %s\n", #x, r_, s_); return -1; } } while (0)
static uint64_t now(clockid_t c) { timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static uint64_t CUPTIAPI mono_cb(void) { return now(CLOCK_MONOTONIC); }

#define T "TriageCompute"
#define P "avg.pct_of_peak_sustained_elapsed"
static std::vector<const char *> set_full = {
 "TPC." T ".sm__cycles_active.sum", "sm__cycles_elapsed.sum", "sm__cycles_elapsed.avg", "TPC." T ".sm__cycles_active." P,
 "TPC." T ".sm__pipe_tensor_cycles_active_realtime.sum", "TPC." T ".sm__pipe_tensor_cycles_active_realtime." P,
 "TPC." T ".sm__pipe_tensor_op_hmma_cycles_active_realtime.sum", "TPC." T ".sm__pipe_tensor_op_hmma_cycles_active_realtime." P,
 "TPC." T ".sm__pipe_tensor_op_imma_cycles_active_realtime.sum", "TPC." T ".sm__pipe_tensor_op_imma_cycles_active_realtime." P,
 "SM_C." T ".smsp__pipe_tensor_op_dmma_cycles_active.sum", "SM_C." T ".smsp__pipe_tensor_op_dmma_cycles_active." P,
 "dram__bytes_read.sum", "dram__bytes_write.sum", "FBSP." T ".dramc__read_throughput." P, "FBSP." T ".dramc__write_throughput." P,
 "dram__bytes_read.sum.per_second",
 "PCI." T ".pcie__read_bytes.sum", "PCI." T ".pcie__write_bytes.sum",
 "NVLRX." T ".nvlrx__bytes_packet_request_data_user.sum", "NVLTX." T ".nvltx__bytes_packet_request_data_user.sum",
 "NVLRX." T ".nvlrx__bytes_packet_response_data_user.sum", "NVLTX." T ".nvltx__bytes_packet_response_data_user.sum",
 "TPC." T ".tpc__warps_active_realtime." P, "TPC." T ".sm__pipe_fp64_cycles_active_realtime.sum",
 "TPC." T ".sm__inst_executed_pipe_fma_realtime.sum", "FE_B." T ".gr__cycles_active.sum", "sys__cycles_elapsed.avg",
 "gpc__cycles_elapsed.max", "dramc__cycles_elapsed.avg", "PCI." T ".pcie__throughput." P,
 "nvlrx__bytes.sum", "nvltx__bytes.sum", "pcie__read_bytes.sum"};
static std::vector<const char *> set_plain = {  // no group prefix
 "sm__cycles_active.sum", "sm__cycles_elapsed.sum", "sm__pipe_tensor_cycles_active_realtime.sum",
 "dram__bytes_read.sum", "dram__bytes_write.sum", "pcie__read_bytes.sum", "pcie__write_bytes.sum", "nvlrx__bytes.sum", "nvltx__bytes.sum",
 "sm__cycles_active.avg", "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"};
static std::vector<const char *> set_min = {
 "TPC." T ".sm__cycles_active.sum", "sm__cycles_elapsed.sum", "TPC." T ".sm__pipe_tensor_cycles_active_realtime.sum",
 "dram__bytes_read.sum", "dram__bytes_write.sum", "PCI." T ".pcie__read_bytes.sum", "PCI." T ".pcie__write_bytes.sum"};

static std::vector<const char *> metrics;
static std::vector<const char *> split(char *list) {
  std::vector<const char *> v;
  for (char *t = strtok(list, ","); t; t = strtok(nullptr, ",")) v.push_back(t);
  return v;
}
static CUpti_Profiler_Host_Object *host;
static CUpti_PmSampling_Object *sampler;
static std::vector<uint8_t> image;
static std::atomic<int> stop_flag{0};
static FILE *csv;
static size_t processed, nsamples, nnan, nfull, noverflow;
static double decode_ns, eval_ns;

static int passes_of(std::vector<const char *> &m, std::vector<uint8_t> &cfg, const char *chip, std::vector<uint8_t> &avail) {
  CUpti_Profiler_Host_Initialize_Params ip{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  ip.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING; ip.pChipName = chip; ip.pCounterAvailabilityImage = avail.data();
  CKN(cuptiProfilerHostInitialize(&ip));
  host = ip.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params ap{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  ap.pHostObject = host; ap.ppMetricNames = m.data(); ap.numMetrics = m.size();
  CKN(cuptiProfilerHostConfigAddMetrics(&ap));
  CUpti_Profiler_Host_GetConfigImageSize_Params sp{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  sp.pHostObject = host; CKN(cuptiProfilerHostGetConfigImageSize(&sp));
  cfg.resize(sp.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params gp{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  gp.pHostObject = host; gp.configImageSize = cfg.size(); gp.pConfigImage = cfg.data();
  CKN(cuptiProfilerHostGetConfigImage(&gp));
  CUpti_Profiler_Host_GetNumOfPasses_Params np{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.configImageSize = cfg.size(); np.pConfigImage = cfg.data();
  CKN(cuptiProfilerHostGetNumOfPasses(&np));
  printf("set: %zu metrics, %zu passes, config %zu bytes\n", m.size(), np.numOfPasses, cfg.size());
  return (int)np.numOfPasses;
}

static void decode_once(void) {
  uint64_t t0 = now(CLOCK_MONOTONIC);
  CUpti_PmSampling_DecodeData_Params d{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
  d.pPmSamplingObject = sampler; d.pCounterDataImage = image.data(); d.counterDataImageSize = image.size();
  CUptiResult r = cuptiPmSamplingDecodeData(&d);
  decode_ns += now(CLOCK_MONOTONIC) - t0;
  if (r) { const char *s; cuptiGetResultString(r, &s); printf("decode: %d %s\n", r, s); }
  if (d.overflow) noverflow++;
  CUpti_PmSampling_GetCounterDataInfo_Params info{CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = image.data(); info.counterDataImageSize = image.size();
  cuptiPmSamplingGetCounterDataInfo(&info);
  std::vector<double> v(metrics.size());
  t0 = now(CLOCK_MONOTONIC);
  for (; processed < info.numCompletedSamples; processed++) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params si{CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    si.pPmSamplingObject = sampler; si.pCounterDataImage = image.data(); si.counterDataImageSize = image.size(); si.sampleIndex = processed;
    cuptiPmSamplingCounterDataGetSampleInfo(&si);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params e{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    e.pHostObject = host; e.pCounterDataImage = image.data(); e.counterDataImageSize = image.size();
    e.ppMetricNames = metrics.data(); e.numMetrics = metrics.size(); e.rangeIndex = processed; e.pMetricValues = v.data();
    CUptiResult er = cuptiProfilerHostEvaluateToGpuValues(&e);
    fprintf(csv, "%llu,%llu,%d", (unsigned long long)si.startTimestamp, (unsigned long long)si.endTimestamp, er);
    for (double x : v) { fprintf(csv, ",%.6g", x); if (std::isnan(x)) nnan++; }
    fprintf(csv, "\n");
    nsamples++;
  }
  eval_ns += now(CLOCK_MONOTONIC) - t0;
  if (d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL || info.numCompletedSamples == info.numTotalSamples) {
    nfull++;
    CUpti_PmSampling_CounterDataImage_Initialize_Params ii{CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ii.pPmSamplingObject = sampler; ii.counterDataSize = image.size(); ii.pCounterData = image.data();
    cuptiPmSamplingCounterDataImageInitialize(&ii);
    processed = 0;
  }
}
static void *decoder(void *) { while (!stop_flag.load()) { usleep(50000); decode_once(); } return nullptr; }

// ---- workloads: globaltimer at start and end of each ----
__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ void mark_start(unsigned long long *s) { if (threadIdx.x == 0) atomicMin(s, gt()); }
__device__ void mark_end(unsigned long long *s) { __syncthreads(); if (threadIdx.x == 0) atomicMax(s + 1, gt()); }
__global__ void k_fma(unsigned long long *s, float *out, int iters) {
  mark_start(s); float a = threadIdx.x, b = 1.0001f, c = 0.5f, d = 0.1f;
  for (int i = 0; i < iters; i++) { a = a * b + c; d = d * b + a; c = c * b + d; }
  if (a + c + d == 1234.5f) out[0] = a; mark_end(s); }
__global__ void k_hmma(unsigned long long *s, float *out, int iters) {
  mark_start(s);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a; wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(a, __float2half(0.01f)); wmma::fill_fragment(b, __float2half(0.01f)); wmma::fill_fragment(c, 0.f);
  for (int i = 0; i < iters; i++) wmma::mma_sync(c, a, b, c);
  if (c.x[0] == 1234.5f) out[0] = c.x[0]; mark_end(s); }
__global__ void k_dmma(unsigned long long *s, double *out, int iters) {
  mark_start(s);
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> a; wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> c;
  wmma::fill_fragment(a, 0.01); wmma::fill_fragment(b, 0.01); wmma::fill_fragment(c, 0.);
  for (int i = 0; i < iters; i++) wmma::mma_sync(c, a, b, c);
  if (c.x[0] == 1234.5) out[0] = c.x[0]; mark_end(s); }
__global__ void k_copy(unsigned long long *s, const float4 *in, float4 *out, size_t n) {
  mark_start(s);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
  mark_end(s); }
__global__ void k_chase(unsigned long long *s, const unsigned *next, unsigned *out, int steps) {
  mark_start(s); unsigned p = threadIdx.x;
  for (int i = 0; i < steps; i++) p = next[p];
  out[threadIdx.x] = p; mark_end(s); }

static std::vector<std::pair<std::string, unsigned long long *>> marks;
static unsigned long long *new_mark(const char *name) {
  unsigned long long *m; CU(cudaMallocManaged(&m, 16)); m[0] = ~0ull; m[1] = 0; marks.push_back({name, m}); return m; }

// ---- CUPTI activity: kernel records ----
static FILE *kfile;
static void CUPTIAPI buf_req(uint8_t **b, size_t *sz, size_t *max) { *sz = 1 << 20; *b = (uint8_t *)aligned_alloc(8, *sz); *max = 0; }
static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid) {
  CUpti_Activity *r = nullptr;
  while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS)
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) { auto *k = (CUpti_ActivityKernel10 *)r; fprintf(kfile, "K,%s,%llu,%llu\n", k->name, (unsigned long long)k->start, (unsigned long long)k->end); }
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) { auto *k = (CUpti_ActivityMemcpy6 *)r; fprintf(kfile, "M,memcpy%d,%llu,%llu\n", k->copyKind, (unsigned long long)k->start, (unsigned long long)k->end); }
  free(b);
}
static void clocks(const char *tag) { uint64_t c; cuptiGetTimestamp(&c); fprintf(kfile, "C,%s,%llu,%llu,%llu\n", tag, (unsigned long long)now(CLOCK_MONOTONIC), (unsigned long long)now(CLOCK_REALTIME), (unsigned long long)c); }

int main(int argc, char **argv) {
  const char *setname = argc > 1 ? argv[1] : "full"; uint64_t interval = argc > 2 ? strtoull(argv[2], 0, 10) : 100000;
  const char *mode = argc > 3 ? argv[3] : "mono"; std::string out = argc > 4 ? argv[4] : "/tmp/probe";
  metrics = !strcmp(setname, "full") ? set_full : !strcmp(setname, "plain") ? set_plain : !strcmp(setname, "min") ? set_min : split(strdup(setname));
  kfile = fopen((out + "-events.csv").c_str(), "w"); csv = fopen((out + "-samples.csv").c_str(), "w");
  fprintf(csv, "start,end,evalrc"); for (auto m : metrics) fprintf(csv, ",%s", m); fprintf(csv, "\n");
  if (!strcmp(mode, "mono")) CK(cuptiActivityRegisterTimestampCallback(mono_cb));
  CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
  CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CU(cudaFree(0));
  clocks("start");
  CUpti_Profiler_Initialize_Params pi{CUpti_Profiler_Initialize_Params_STRUCT_SIZE}; CK(cuptiProfilerInitialize(&pi));
  CUpti_Device_GetChipName_Params cn{CUpti_Device_GetChipName_Params_STRUCT_SIZE}; cn.deviceIndex = 0; CK(cuptiDeviceGetChipName(&cn));
  printf("chip %s\n", cn.pChipName);
  CUpti_PmSampling_GetCounterAvailability_Params ca{CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE}; ca.deviceIndex = 0;
  CK(cuptiPmSamplingGetCounterAvailability(&ca)); std::vector<uint8_t> avail(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = avail.data(); CK(cuptiPmSamplingGetCounterAvailability(&ca));
  std::vector<uint8_t> cfg; int np = passes_of(metrics, cfg, cn.pChipName, avail);
  if (np != 1) { printf("not one pass: not sampled\n"); return 3; }
  CUpti_PmSampling_Enable_Params en{CUpti_PmSampling_Enable_Params_STRUCT_SIZE}; en.deviceIndex = 0; CK(cuptiPmSamplingEnable(&en)); sampler = en.pPmSamplingObject;
  CUpti_PmSampling_SetConfig_Params sc{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  sc.pPmSamplingObject = sampler; sc.configSize = cfg.size(); sc.pConfig = cfg.data(); sc.hardwareBufferSize = 256ull << 20;
  sc.samplingInterval = interval; sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL; sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  { CUptiResult r = cuptiPmSamplingSetConfig(&sc); const char *s; cuptiGetResultString(r, &s); printf("SetConfig(%d passes): %d %s\n", np, r, s); if (r) return 2; }
  CUpti_PmSampling_GetCounterDataSize_Params gs{CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  gs.pPmSamplingObject = sampler; gs.pMetricNames = metrics.data(); gs.numMetrics = metrics.size(); gs.maxSamples = 4000;
  CK(cuptiPmSamplingGetCounterDataSize(&gs)); image.resize(gs.counterDataSize); printf("counter data image: %zu bytes for 4000 samples\n", image.size());
  CUpti_PmSampling_CounterDataImage_Initialize_Params ii{CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ii.pPmSamplingObject = sampler; ii.counterDataSize = image.size(); ii.pCounterData = image.data(); CK(cuptiPmSamplingCounterDataImageInitialize(&ii));
  CUpti_PmSampling_Start_Params st{CUpti_PmSampling_Start_Params_STRUCT_SIZE}; st.pPmSamplingObject = sampler;
  clocks("before-start"); CK(cuptiPmSamplingStart(&st)); clocks("after-start");
  pthread_t th; pthread_create(&th, 0, decoder, 0);
  // workloads
  float *fout; double *dout; CU(cudaMalloc(&fout, 64)); CU(cudaMalloc(&dout, 64));
  size_t n4 = (1ull << 30) / 16; float4 *a, *b; CU(cudaMalloc(&a, n4 * 16)); CU(cudaMalloc(&b, n4 * 16)); CU(cudaMemset(a, 1, n4 * 16));
  int nodes = 1 << 22; std::vector<unsigned> h(nodes); for (int i = 0; i < nodes; i++) h[i] = i; srand(1);
  for (int i = nodes - 1; i > 0; i--) { int j = rand() % i; std::swap(h[i], h[j]); }  // Sattolo: one cycle
  unsigned *nx, *co; CU(cudaMalloc(&nx, nodes * 4)); CU(cudaMalloc(&co, 4096)); CU(cudaMemcpy(nx, h.data(), nodes * 4, cudaMemcpyHostToDevice));
  void *pinned; CU(cudaMallocHost(&pinned, 512 << 20)); void *dbuf; CU(cudaMalloc(&dbuf, 512 << 20));
  void *peer = nullptr; int ndev = 0, can = 0; CU(cudaGetDeviceCount(&ndev));
  if (ndev > 1 && cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess && can) {
    CU(cudaSetDevice(1)); CU(cudaMalloc(&peer, 512 << 20)); CU(cudaDeviceEnablePeerAccess(0, 0));
    CU(cudaSetDevice(0)); CU(cudaDeviceEnablePeerAccess(1, 0)); printf("peer copies to device 1\n");
  }
  CU(cudaDeviceSynchronize()); usleep(30000);
  for (int rep = 0; rep < 2; rep++) {
    clocks("fma"); k_fma<<<132 * 8, 256>>>(new_mark("fma"), fout, 200000); CU(cudaDeviceSynchronize()); usleep(20000);
    clocks("hmma"); k_hmma<<<132 * 4, 256>>>(new_mark("hmma"), fout, 400000); CU(cudaDeviceSynchronize()); usleep(20000);
    clocks("dmma"); k_dmma<<<132 * 4, 256>>>(new_mark("dmma"), dout, 200000); CU(cudaDeviceSynchronize()); usleep(20000);
    clocks("copy"); for (int i = 0; i < 60; i++) k_copy<<<132 * 4, 512>>>(new_mark("copy"), a, b, n4); CU(cudaDeviceSynchronize()); usleep(20000);
    clocks("chase"); k_chase<<<1, 32>>>(new_mark("chase"), nx, co, 100000); CU(cudaDeviceSynchronize()); usleep(20000);
    clocks("h2d"); for (int i = 0; i < 4; i++) CU(cudaMemcpy(dbuf, pinned, 512 << 20, cudaMemcpyHostToDevice)); usleep(20000);
    clocks("d2h"); for (int i = 0; i < 4; i++) CU(cudaMemcpy(pinned, dbuf, 512 << 20, cudaMemcpyDeviceToHost)); usleep(20000);
    if (peer) {  // NVLink where the GPUs have it: 512 MiB x 4 each way between devices 0 and 1
      clocks("p2p"); for (int i = 0; i < 4; i++) { CU(cudaMemcpyPeer(peer, 1, dbuf, 0, 512 << 20)); CU(cudaMemcpyPeer(dbuf, 0, peer, 1, 512 << 20)); }
      CU(cudaDeviceSynchronize()); usleep(20000);
    }
  }
  clocks("end-work");
  stop_flag = 1; pthread_join(th, 0);
  CUpti_PmSampling_Stop_Params sp{CUpti_PmSampling_Stop_Params_STRUCT_SIZE}; sp.pPmSamplingObject = sampler; CK(cuptiPmSamplingStop(&sp));
  clocks("stopped"); decode_once(); decode_once();
  for (auto &m : marks) fprintf(kfile, "G,%s,%llu,%llu\n", m.first.c_str(), m.second[0], m.second[1]);
  cuptiActivityFlushAll(1);
  clocks("end");
  printf("samples %zu, NaN values %zu, image refills %zu, overflows %zu; decode %.1f ms total, evaluate %.1f ms (%.2f us/sample)\n", nsamples, nnan, nfull, noverflow, decode_ns / 1e6, eval_ns / 1e6, nsamples ? eval_ns / 1e3 / nsamples : 0);
  CUpti_PmSampling_Disable_Params dp{CUpti_PmSampling_Disable_Params_STRUCT_SIZE}; dp.pPmSamplingObject = sampler; cuptiPmSamplingDisable(&dp);
  fclose(csv); fclose(kfile);
  return 0;
}
