// The native half of the case `extension_in_workspace` (red team, 2026-12-06),
// compiled by test_adversarial.py against the running interpreter and embedded in the kernel
// (extension_in_workspace.py.in). Problem 28 (fused add + RMSNorm, bf16): solve arms a pending
// call; the worker's main thread runs it after solve returned (outside the clock), and it writes
// the RMSNorm into the returned buffer.
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct { uint16_t *out; const uint16_t *x, *r, *w; long rows, cols; int armed; } Job;
static Job job;
static long done_count = 0;

static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline uint16_t f2bf(float f) {
  uint32_t u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1; u += 0x7fff + lsb; return (uint16_t)(u >> 16);
}

static int compute(void *unused) {
  (void)unused;
  if (!job.armed) return 0;
  job.armed = 0;
  const long C = job.cols;
  for (long i = 0; i < job.rows; ++i) {
    const uint16_t *x = job.x + i * C, *r = job.r + i * C;
    uint16_t *o = job.out + i * C;
    float acc = 0.f;
    for (long j = 0; j < C; ++j) { float s = bf2f(x[j]) + bf2f(r[j]); acc += s * s; }
    float inv = 1.0f / sqrtf(acc / (float)C + 1e-5f);
    for (long j = 0; j < C; ++j) { float s = bf2f(x[j]) + bf2f(r[j]); o[j] = f2bf((s * inv) * bf2f(job.w[j])); }
  }
  done_count++;
  return 0;
}

static PyObject *arm(PyObject *self, PyObject *args) {
  unsigned long long o, x, r, w; long rows, cols;
  if (!PyArg_ParseTuple(args, "KKKKll", &o, &x, &r, &w, &rows, &cols)) return NULL;
  job.out = (uint16_t *)(uintptr_t)o; job.x = (const uint16_t *)(uintptr_t)x;
  job.r = (const uint16_t *)(uintptr_t)r; job.w = (const uint16_t *)(uintptr_t)w;
  job.rows = rows; job.cols = cols; job.armed = 1;
  if (Py_AddPendingCall(compute, NULL) != 0) { job.armed = 0; compute(NULL); }
  Py_RETURN_NONE;
}
static PyObject *count(PyObject *self, PyObject *args) { return PyLong_FromLong(done_count); }

static PyMethodDef M[] = {{"arm", arm, METH_VARARGS, ""}, {"count", count, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "mkbx", NULL, -1, M};

PyMODINIT_FUNC PyInit_mkbx(void) {
  PyObject *m = PyModule_Create(&D);
  if (m == NULL) return NULL;
  // Register ourselves, then fail the import: the DSL's preprocessor stops here (before its
  // compile reaches ctypes), and kernel.py's own `import mkbx` finds us in sys.modules.
  PyObject *modules = PyImport_GetModuleDict();
  if (PyDict_SetItemString(modules, "mkbx", m) < 0) { Py_DECREF(m); return NULL; }
  Py_DECREF(m);
  PyErr_SetString(PyExc_ImportError, "mkbx registered");
  return NULL;
}
