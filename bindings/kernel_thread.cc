// The kernel's thread (SPEC §3 "Trust boundary"): the worker imports kernel.py and calls solve on
// a thread of its own, started here in C++, whose Python stack holds nothing but what kernel.py
// runs. A frame that kernel.py gets hold of in any way leads, through f_back, to its own frames and
// then to none: the worker's frames (its Worker, channel, clock and monitor in their locals and
// globals) are on another thread's stack. What runs there — the call, the clock around a timed
// call, str() of the kernel's exception and the type's names, the traceback's entries, the
// exception's release and the finalisers it fires — is kernel.py's work, done while a call is
// under way (the watch on kernel code is off).
#include <Python.h>
#include <dlfcn.h>
#include <frameobject.h>
#include <pybind11/stl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/bindings.h"

namespace mkb::python {
namespace py = pybind11;

namespace {

std::string Utf8(PyObject* text) {
  if (text == nullptr || !PyUnicode_Check(text)) return "";
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (data != nullptr) return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();  // lone surrogates: each becomes a replacement
  PyObject* bytes = PyUnicode_AsEncodedString(text, "utf-8", "replace");
  if (bytes == nullptr) {
    PyErr_Clear();
    return "";
  }
  std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

// A type's __name__, __qualname__ and __module__ as the type object holds them, read in C: a
// metaclass's properties of those names are kernel.py's code and are not consulted.
std::tuple<std::string, std::string, std::string> TypeNames(PyTypeObject* type) {
  const char* full = type->tp_name;
  const char* dot = std::strrchr(full, '.');
  std::string name = dot != nullptr ? dot + 1 : full;
  if ((type->tp_flags & Py_TPFLAGS_HEAPTYPE) == 0) {
    return {name, name, dot != nullptr ? std::string(full, dot) : "builtins"};
  }
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(type);
  std::string qualname = PyUnicode_CheckExact(heap->ht_qualname) ? Utf8(heap->ht_qualname) : name;
  std::string module;
  PyObject* dict = type->tp_dict;  // borrowed
  PyObject* value = dict != nullptr ? PyDict_GetItemString(dict, "__module__") : nullptr;
  if (value != nullptr && PyUnicode_CheckExact(value)) module = Utf8(value);
  return {name, qualname.empty() ? name : qualname, module};
}

// The running exception as ("raised", name, qualname, module, message, entries); it is released
// here, on the kernel's thread.
py::tuple TakeRaised() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (type == nullptr) {
    return py::make_tuple("raised", "SystemError", "SystemError", "builtins",
                          "a call failed without an exception", py::list());
  }
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != nullptr && tb != nullptr) PyException_SetTraceback(value, tb);
  PyTypeObject* exc_type =
      value != nullptr ? Py_TYPE(value) : reinterpret_cast<PyTypeObject*>(type);
  auto [name, qualname, module] = TypeNames(exc_type);
  std::string message;
  if (value != nullptr) {
    PyObject* text = PyObject_Str(value);  // the kernel's __str__, if it has one: runs here
    if (text == nullptr) {
      PyErr_Clear();
      message = "<exception str() failed>";
    } else {
      message = Utf8(text);
      Py_DECREF(text);
    }
  }
  std::vector<std::tuple<std::string, int, std::string>> entries = TracebackEntries(tb);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_Clear();
  return py::make_tuple("raised", name, qualname, module, message, entries);
}

// A thread state's identity across every interpreter of the process: (interpreter id, thread
// state id), both unique for the process's life (a thread state's id never repeats within its
// interpreter). With the GIL held.
using ThreadKey = std::pair<int64_t, uint64_t>;

// Every thread state of every interpreter in the process (a subinterpreter's threads too) that
// is initialised. On CPython 3.11 a native thread entering Python (PyGILState_Ensure, which
// needs no GIL) links its new thread state into the list before initialising it: its id and
// frame are not to be read then (the census read one and the worker died of SIGSEGV: a
// red-team kernel's TorchScript fork, 2026-12-05). It is seen by the next walk. CPython 3.12
// initialises a thread state before it links it.
template <typename Visit>
void ForEachThreadState(Visit visit) {
  for (PyInterpreterState* i = PyInterpreterState_Head(); i != nullptr;
       i = PyInterpreterState_Next(i)) {
    for (PyThreadState* t = PyInterpreterState_ThreadHead(i); t != nullptr;
         t = PyThreadState_Next(t)) {
      if (!ThreadStateInitialised(t)) continue;
      visit(ThreadKey{PyInterpreterState_GetID(i), PyThreadState_GetID(t)}, t);
    }
  }
}

// Where a thread state is in Python ("file:line function", its innermost frame), read in C.
std::string WhereIn(PyThreadState* t) {
  PyFrameObject* frame = PyThreadState_GetFrame(t);  // new reference, or none
  if (frame == nullptr) return "in no Python frame (C code: a C callable's target)";
  PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
  std::string where = absl::StrCat("at ", Utf8(code->co_filename), ":",
                                   PyFrame_GetLineNumber(frame), " ", Utf8(code->co_name));
  Py_DECREF(code);
  Py_DECREF(frame);
  return where;
}

// The cyclic collector off for a scope, as it was after.
class CollectorHeld {
 public:
  CollectorHeld() : was_enabled_(PyGC_Disable() != 0) {}
  ~CollectorHeld() {
    if (was_enabled_) PyGC_Enable();
  }
  CollectorHeld(const CollectorHeld&) = delete;
  CollectorHeld& operator=(const CollectorHeld&) = delete;

 private:
  bool was_enabled_;
};

// The interpreter's pending calls (Py_AddPendingCall) run on the main thread when it next runs
// Python: for the worker, after the kernel's call returned and before its outputs are read. A
// kernel that reached the C API (through ctypes, by a function pointer made from an address)
// queued one that did the work there, after the clock stopped (red teams, 2026-12-05 to 12-06:
// 5-20x strict on the CPU judge). So while the kernel's thread runs a job, the queue holds the
// judge's own no-op calls all but one slot (the main thread, waiting in C++ with the GIL
// released, runs none of them until the job is over): a kernel can queue one call at most, and
// the judge sees it taken. NoPendingWork is such a call.
//
// The hold counts the queue, and a kernel with raw memory (TIR compiled for the CPU, its buffers
// unchecked) rewrote one of the judge's queued entries into a call of its own, which the count
// never sees (red team, 2026-12-06: 3.4-5.3x strict). So each of the judge's calls of a job
// carries a token (its place, 1-based) and marks it run with the job's number: a token not
// marked once the main thread has run the queue is an entry that was not the judge's any more.
constexpr int kMaxTokens = 64;
uint64_t g_token_run[kMaxTokens + 1] = {};  // the job number each token last ran with (GIL)
uint64_t g_token_job = 0;                   // the job whose tokens are queued (GIL)

int NoPendingWork(void* token) {
  const auto place = reinterpret_cast<intptr_t>(token);
  if (place > 0 && place <= kMaxTokens) g_token_run[place] = g_token_job;
  return 0;
}

// Queues up to `count` of the judge's no-op pending calls, with tokens first, first + 1, ...
// (0: none); how many it could (the queue's size is CPython's: 31 in 3.11 and 3.12).
int QueueNoPendingWork(int count, int first = 0) {
  int queued = 0;
  while (queued < count) {
    const intptr_t token = first > 0 && first + queued <= kMaxTokens ? first + queued : 0;
    if (Py_AddPendingCall(&NoPendingWork, reinterpret_cast<void*>(token)) != 0) break;
    ++queued;
  }
  return queued;
}

// CPython 3.12 has a second queue, the interpreter's own (private _PyEval_AddPendingCall with
// mainthreadonly 0, exported), whose calls any of its threads runs at its next check: the
// kernel's thread itself inside the call (timed work), or, if that thread runs no more Python
// before the job ends (the CPU judge's clock is C++), the main thread after it. Its calls still
// queued when a job ends are found by filling it (measured on 3.12.1: a call queued there during
// the job ran on the kernel's thread before the job ended). Looked up, not linked: absent, no
// check.
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
using InterpreterQueueAdd = int (*)(PyInterpreterState*, int (*)(void*), void*, int);
int QueueNoPendingWorkForInterpreter(int count) {
  static const auto add =
      reinterpret_cast<InterpreterQueueAdd>(::dlsym(RTLD_DEFAULT, "_PyEval_AddPendingCall"));
  if (add == nullptr) return -1;
  PyInterpreterState* interpreter = PyInterpreterState_Get();
  int queued = 0;
  while (queued < count && add(interpreter, &NoPendingWork, nullptr, 0) == 0) ++queued;
  return queued;
}
#else
int QueueNoPendingWorkForInterpreter(int) { return -1; }  // one queue: Py_AddPendingCall's
#endif

// The main thread (its thread id is the process's): only it runs pending calls.
bool OnMainThread() { return ::getpid() == static_cast<pid_t>(::syscall(SYS_gettid)); }

class KernelThread {
  struct Job {
    PyObject* fn = nullptr;  // borrowed: the caller holds them until the call returns
    PyObject* args = nullptr;
    bool timed = false;
    bool between = false;  // work between calls (Between): watched, the collector held
  };

 public:
  KernelThread(py::object clock, int spin_us) : spin_us_(spin_us > 0 ? spin_us : 0) {
    if (!clock.is_none()) {
      clock_start_ = clock.attr("start");
      clock_stop_ = clock.attr("stop");
      if (py::hasattr(clock, "read")) clock_read_ = clock.attr("read");
    }
    // The pending-call queue's size, measured here on the main thread, which then empties it
    // (elsewhere no thread can: the hold below is off).
    if (OnMainThread()) {
      main_thread_submits_ = true;
      pending_size_ = QueueNoPendingWork(4096);
      interpreter_queue_size_ = QueueNoPendingWorkForInterpreter(4096);
      RunPendingCalls();
    }
    std::thread([this] { Loop(); }).detach();  // lives as long as the process
    // Returns once the thread has its Python thread state. Made while this thread walks the
    // interpreter's thread states (the watch's switch, GIL held), CPython 3.11 links a new thread
    // state before it initialises it, and the walk crashed the worker (SIGSEGV in
    // _PyThreadState_UpdateTracingState, about 1 CPU evaluation in 400, the CPU judge's
    // prepare switching the watch on right after making this thread). The thread needs the GIL
    // to make its state: released while waiting.
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return ready_; });
  }

  // The thread's id (gettid) in this process's PID namespace.
  int native_id() {
    std::lock_guard<std::mutex> lock(mutex_);
    return native_id_;
  }

  // fn(*args) on the kernel's thread: ("ok", seconds, value) or TakeRaised()'s tuple. Timed:
  // seconds by the clock (start, call, stop, all on that thread), else 0.
  py::tuple Call(const py::object& fn, const py::tuple& args, bool timed) {
    return Submit(Job{fn.ptr(), args.ptr(), timed, false});
  }

  // fn(*args) on the kernel's thread as work between calls: the watch on kernel code stays on
  // (a frame of kernel.py's that runs is runtime.outside_call) and the cyclic collector held.
  // The worker lets go of a call's objects this way, so that a finaliser of the kernel's runs
  // on this thread, never on the worker's main thread, whose state (a torch mode, a signal
  // handler: main-thread only) the worker's own work then reads. ("ok", 0.0, value) or
  // TakeRaised()'s tuple.
  py::tuple Between(const py::object& fn, const py::tuple& args) {
    return Submit(Job{fn.ptr(), args.ptr(), false, true});
  }

 private:
  py::tuple Submit(const Job& submitted) {
    if (std::this_thread::get_id() == thread_id()) {
      throw py::value_error("KernelThread.call from the kernel's own thread");
    }
    PyObject* result = nullptr;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mutex_);
      if (busy_) throw std::logic_error("KernelThread.call while a call is under way");
      busy_ = true;
      job_ = submitted;
      has_job_ = true;
      posted_.store(true, std::memory_order_release);
      done_ = false;
      changed_.notify_all();
      changed_.wait(lock, [this] { return done_; });
      result = result_;
      result_ = nullptr;
      busy_ = false;
    }
    // The judge's no-op pending calls queued for the job, and a call of the kernel's if it
    // queued one (already reported): run now, before the worker reads what the job returned.
    RunPendingCalls();
    // Each of the job's tokens ran: else an entry of the judge's was rewritten in the queue.
    if (tokens_ > 0 && OnMainThread()) {
      bool rewritten = false;
      for (int place = 1; place <= tokens_; ++place) {
        if (g_token_run[place] != g_token_job) rewritten = true;
      }
      if (rewritten) ReportPendingCall();
    }
    tokens_ = 0;
    if (result == nullptr) throw std::runtime_error("the kernel's thread returned nothing");
    return py::reinterpret_steal<py::tuple>(result);
  }

  // With the GIL held, on the main thread (elsewhere CPython runs none): the pending calls.
  void RunPendingCalls() {
    if (pending_size_ < 2 || !OnMainThread()) return;
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    if (Py_MakePendingCalls() < 0) PyErr_Clear();  // a failing call of the kernel's
    PyErr_Restore(type, value, tb);
  }

  std::thread::id thread_id() {
    std::lock_guard<std::mutex> lock(mutex_);
    return thread_id_;
  }

  void Loop() {
    PyGILState_STATE gil = PyGILState_Ensure();  // this thread's state, kept for its life
    {
      std::lock_guard<std::mutex> lock(mutex_);
      thread_id_ = std::this_thread::get_id();
      native_id_ = static_cast<int>(::syscall(SYS_gettid));
    }
    PyThreadState* state = PyEval_SaveThread();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_ = true;
    }
    changed_.notify_all();
    for (;;) {
      Job job;
      SpinForJob();
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return has_job_; });
        has_job_ = false;
        posted_.store(false, std::memory_order_relaxed);
        job = job_;
      }
      PyEval_RestoreThread(state);
      // The queue all but full of the judge's no-op calls while the job runs: one slot left.
      const int hold = pending_size_ >= 2 ? pending_size_ - 1 : 0;
      // Tokenised only where the main thread runs the queue once the job is over (Submit).
      const bool tokens = hold > 0 && hold + 1 <= kMaxTokens && main_thread_submits_;
      if (tokens) ++g_token_job;
      bool foreign = hold > 0 && QueueNoPendingWork(hold, tokens ? 1 : 0) < hold;  // queued before
      PyObject* result = Run(job);
      if (hold > 0 && QueueNoPendingWork(1, tokens ? hold + 1 : 0) == 0) foreign = true;  // taken
      tokens_ = foreign || !tokens ? 0 : hold + 1;
      if (interpreter_queue_size_ > 0 &&
          QueueNoPendingWorkForInterpreter(interpreter_queue_size_) < interpreter_queue_size_)
        foreign = true;  // a call still queued for any thread (3.12)
      if (foreign) ReportPendingCall();
      state = PyEval_SaveThread();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        result_ = result;
        done_ = true;
      }
      changed_.notify_all();
    }
    PyEval_RestoreThread(state);  // not reached: the thread ends with the process
    PyGILState_Release(gil);
  }

  // Without the GIL: up to spin_us_ polling for the next job before the thread sleeps on the
  // condition variable, so that its CPU stays busy between the calls of a pass (the main thread
  // reads each call's inputs meanwhile) instead of idling until the job wakes it. A timed call
  // then starts on a CPU that was running, as the published method's call starts on the thread
  // that just drew its inputs (benchmarks/parity, --diagnose-worker's thread_spin layer). No
  // Python runs here.
  void SpinForJob() {
    if (spin_us_ <= 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    while (!posted_.load(std::memory_order_acquire)) {
      for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
      }
      if (std::chrono::steady_clock::now() >= until) return;
    }
  }

  // With the GIL held, on the kernel's thread. The watch on kernel code is off exactly while
  // kernel.py's code may run: from after the clock started to the moment fn returned (its
  // exception described) and the timed window closed, and on again before the clock waits for
  // the device and reads, so that nothing of the kernel's runs unwatched outside the timed
  // window (another thread of its own while the clock waits for the device with the GIL
  // released; a __del__ fired by a collection the judge's next allocation triggers). A clock in
  // parts (start, stop, read: PublishedClock) closes its window (stop) before the watch goes on;
  // CallClock (start, stop: C++, no Python to re-instrument) stops after it. The cyclic
  // collector is held off across each switch, where the judge's own allocations would otherwise
  // be the ones to trigger it.
  PyObject* Run(const Job& job) {
    try {
      if (job.between) return RunBetween(job);
      return RunWatched(job);
    } catch (py::error_already_set& error) {
      error.restore();
      py::tuple raised = TakeRaised();
      SetKernelWatch(true);
      return raised.release().ptr();
    } catch (const std::exception& error) {
      SetKernelWatch(true);
      return py::make_tuple("raised", "RuntimeError", "RuntimeError", "builtins", error.what(),
                            py::list())
          .release()
          .ptr();
    }
  }

 public:
  // With the GIL held (any thread): no collection until ReleaseCollector (or the next call).
  void HoldCollector() {
    if (!holding_) collector_was_enabled_ = PyGC_Disable() != 0;
    holding_ = true;
  }

  // With the GIL held (any thread): the collector as it was before the last call returned.
  void ReleaseCollector() {
    if (holding_ && collector_was_enabled_) PyGC_Enable();
    holding_ = false;
  }

 private:
  // Between calls: the watch is on (as everywhere between calls) and stays on.
  PyObject* RunBetween(const Job& job) {
    HoldCollector();
    PyObject* value = PyObject_Call(job.fn, job.args, nullptr);
    CountThreads();
    if (value == nullptr) return TakeRaised().release().ptr();
    return py::make_tuple("ok", 0.0, py::reinterpret_steal<py::object>(value)).release().ptr();
  }

  PyObject* RunWatched(const Job& job) {
    ReleaseCollector();  // held since the last call returned: the worker's snapshot is taken
    const bool clocked = job.timed && clock_start_;
    std::chrono::steady_clock::time_point start, stop;
    {
      CollectorHeld held;
      if (clocked) {
        PyObject* started = PyObject_CallNoArgs(clock_start_.ptr());
        if (started == nullptr) return TakeRaised().release().ptr();  // watch still on
        Py_DECREF(started);
      }
      SetKernelWatch(false);
      start = std::chrono::steady_clock::now();
    }
    PyObject* value = PyObject_Call(job.fn, job.args, nullptr);
    stop = std::chrono::steady_clock::now();
    // The call's exception, set aside while the checks below run (they call into Python, which
    // must not run with an exception set: the guard's lookups cleared it, and every exception
    // kernel.py's import raised read "SystemError: a call failed without an exception"; red
    // team, 2026-12-06), and put back for TakeRaised.
    PyObject *raised_type = nullptr, *raised_value = nullptr, *raised_tb = nullptr;
    if (value == nullptr) PyErr_Fetch(&raised_type, &raised_value, &raised_tb);
    // From here until the worker has taken its snapshot of the outputs (ReleaseCollector), no
    // collection: one would run the finalisers of the kernel's garbage cycles, which need no
    // frame of kernel.py's (C callables composed: functools.partial of torch ops), and which a
    // kernel can time for the harness's next allocation, doing its work after the clock.
    HoldCollector();
    CountThreads();  // after the hold: its findings' allocations trigger no collection
    // At every return (the import's too), before the clock's stop runs: a name the clock's code
    // looks up, changed by the call, would make the stop run kernel.py's code (unwatched) or read
    // a forged time. Such a call is not timed by that clock at all.
    const bool tampered = !guarded_.empty() && ClockTampered();
    if (value == nullptr) {
      PyErr_Restore(raised_type, raised_value, raised_tb);
      py::tuple raised = TakeRaised();  // the kernel's __str__ and finalisers: unwatched
      CollectorHeld held;
      SetKernelWatch(true);
      return raised.release().ptr();
    }
    double seconds = 0.0;
    {
      CollectorHeld held;
      PyObject* read = nullptr;  // new reference: the clock's reading
      if (tampered && clocked) {
        SetKernelWatch(true);
        seconds = std::chrono::duration<double>(stop - start).count();
      } else if (clocked && clock_read_) {
        // A clock in parts (PublishedClock: Python): its window closed before the watch goes on,
        // so that the watch's switch (which makes CPython re-instrument the code it runs next)
        // costs the timed call nothing; then, watched, the wait for the end and the reading.
        PyObject* stopped = PyObject_CallNoArgs(clock_stop_.ptr());
        if (stopped == nullptr) {
          py::tuple raised = TakeRaised();  // the call failed: described, then watched again
          SetKernelWatch(true);
          Py_DECREF(value);  // the kernel's finalisers, if any, watched
          return raised.release().ptr();
        }
        Py_DECREF(stopped);
        SetKernelWatch(true);
        read = PyObject_CallNoArgs(clock_read_.ptr());
      } else {
        SetKernelWatch(true);
        if (clocked)
          read = PyObject_CallNoArgs(clock_stop_.ptr());  // CallClock: C++, stops and reads
      }
      if (clocked && !tampered) {
        if (read == nullptr) {
          Py_DECREF(value);
          return TakeRaised().release().ptr();
        }
        seconds = PyFloat_AsDouble(read);
        Py_DECREF(read);
        if (seconds == -1.0 && PyErr_Occurred()) {
          Py_DECREF(value);
          return TakeRaised().release().ptr();
        }
      } else if (job.timed && !clocked) {
        seconds = std::chrono::duration<double>(stop - start).count();
      }
    }
    return py::make_tuple("ok", seconds, py::reinterpret_steal<py::object>(value)).release().ptr();
  }

  // A pending call someone other than the judge queued, found as a job ended (GIL held).
  void ReportPendingCall() {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    RecordRuntimeViolation(
        "runtime.pending_call",
        "a call queued for the interpreter's main thread (Py_AddPendingCall) while kernel.py's "
        "code ran: the main thread would run it after the clock stopped, before the outputs are "
        "read",
        "Py_AddPendingCall");
    PyErr_Restore(type, value, tb);
  }

  // The census of threads as fn returns, the GIL still held on this thread (so no other thread
  // of Python's has run since): a Python thread that was not there when mark_threads() was
  // called is kernel.py's (threads are forbidden it, yet reachable through re-exports or C
  // callables), and one alive now can do the call's work after the clock stops, with the GIL
  // while the clock waits for the device or before the worker's snapshot. Each such thread is
  // a runtime.thread violation, reported once. Keeps any exception fn raised as it was.
  void CountThreads() {
    if (!marked_) return;
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    PyThreadState* self = PyThreadState_Get();  // this thread's own state is the judge's
    known_threads_.insert(ThreadKey{PyInterpreterState_GetID(PyThreadState_GetInterpreter(self)),
                                    PyThreadState_GetID(self)});
    std::vector<std::pair<ThreadKey, std::string>> strays;  // reported once each
    ForEachThreadState([this, &strays](const ThreadKey& key, PyThreadState* t) {
      if (known_threads_.insert(key).second) strays.emplace_back(key, WhereIn(t));
    });
    for (const auto& [key, where] : strays) {
      RecordRuntimeViolation(
          "runtime.thread",
          "a Python thread kernel.py started was still alive when its call returned (threads "
          "are the judge's: one can do the call's work after the clock stops)",
          absl::StrCat("thread ", key.second,
                       key.first != 0 ? absl::StrCat(" in interpreter ", key.first, ",") : "", " ",
                       where));
    }
    PyErr_Restore(type, value, tb);
  }

 public:
  // With the GIL held: every Python thread there is now is the judge's (or its libraries'); any
  // other alive when a later call returns is kernel.py's. Called before kernel.py is imported.
  void MarkThreads() {
    ForEachThreadState(
        [this](const ThreadKey& key, PyThreadState*) { known_threads_.insert(key); });
    marked_ = true;
  }

  // The names a clock in parts looks up when it runs (values.clock_reach): entries (owner, name,
  // present, value), the owner a module or a heap type, each name with the object it held (or
  // absent: a global that resolves to a builtin, a class attribute found on a base). From here
  // on, before each timed call's clock stops, every entry and every owner's type must be as it
  // was when each call returns (timed or not): one changed is a runtime.clock_tampered violation,
  // every timed call from then on is timed by the monotonic clock (the Python clock not run), and
  // the changed state is what later checks compare with (a further change is reported too).
  // Called before kernel.py is imported.
  void GuardClock(const py::list& entries) {
    for (const py::handle& item : entries) {
      auto entry = item.cast<py::tuple>();
      if (entry.size() != 4)
        throw py::value_error("guard_clock: entries are (owner, name, present, value)");
      py::object owner = py::reinterpret_borrow<py::object>(entry[0]);
      const bool module = PyModule_Check(owner.ptr());
      const bool heap_type =
          PyType_Check(owner.ptr()) &&
          (reinterpret_cast<PyTypeObject*>(owner.ptr())->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0;
      if (!module && !heap_type && !PyDict_CheckExact(owner.ptr()))
        throw py::value_error(
            "guard_clock: an owner is a module, a class defined in Python or a globals dict");
      if (!PyUnicode_CheckExact(entry[1].ptr()))
        throw py::value_error("guard_clock: a name is a str");
      Guarded g;
      g.owner = owner;
      g.key = py::reinterpret_borrow<py::object>(entry[1]);
      if (entry[2].cast<bool>()) g.value = py::reinterpret_borrow<py::object>(entry[3]);
      g.print = FingerprintOf(g.value.ptr());
      g.label = absl::StrCat(OwnerName(owner), ".", Utf8(g.key.ptr()));
      bool seen = false;
      for (const auto& [known, type] : owner_types_) seen = seen || known.ptr() == owner.ptr();
      if (!seen)
        owner_types_.emplace_back(owner, py::reinterpret_borrow<py::object>(
                                             reinterpret_cast<PyObject*>(Py_TYPE(owner.ptr()))));
      guarded_.push_back(std::move(g));
    }
    dict_versions_.clear();  // noted afresh at the next check that finds every entry as it was
  }
  size_t guarded() const { return guarded_.size(); }
  // With the GIL held (the worker's main thread, after it exported a call's outputs): whether a
  // guarded name changed since the last check (reported as at a call's return). A change
  // made while the export ran (a callback the kernel left that fires on a reference the export
  // drops) is seen here, after the fact: the verdict is not final yet.
  //
  // Here, off the clock, the check is also a full one: every entry looked up whatever the
  // dictionaries' version tags say, and every guarded object compared with what it was made of
  // (Fingerprint). A kernel with raw memory rewrote os.fstat, the very object the worker's
  // values._fstat holds, in place into a functools.partial of its own (its type pointer and
  // fields copied over): the same object in the same entry, with no version tag moved, so the
  // identity checks saw nothing, and the worker's main thread ran the kernel's work opening each
  // call's inputs, before the clock (ninth session's red team, 2026-12-07: 146-179x).
  bool CheckGuard() { return !guarded_.empty() && ClockTampered(/*full=*/true); }

 private:
  // What a guarded object is made of, as far as the interpreter's call of it goes: its type and,
  // for the callables the worker's reach holds, the fields a call reads (a builtin's method
  // definition, its C function and its bound self; a Python function's code, globals, defaults
  // and closure; a method descriptor's definition; a slot wrapper's wrapped function; a module's
  // dictionary). Read from the object's memory: no Python code runs.
  struct Fingerprint {
    const void* type = nullptr;
    std::array<const void*, 6> fields = {};
    uint64_t code = 0;  // a Python function's code object, by content (CodeDigest)
    bool operator==(const Fingerprint& other) const {
      return type == other.type && fields == other.fields && code == other.code;
    }
  };
  // A code object by what it runs with: its constants and names (the tuples and their items, by
  // address), its exception table and its shape. The second red team of 2026-12-07's eleventh
  // session rewrote the code object of the worker's own _StateSnapshot.changed in place with raw
  // memory (bytecode, header and a constants tuple of the kernel's, the worker's file name kept):
  // the function kept its code object's address, which was all the fingerprint compared, and the
  // worker's main thread computed each answer before the clock (137-147x strict). The bytecode
  // itself is not compared: the interpreter rewrites the stored copy as it specialises it (and,
  // on 3.12, as profiling instruments it), and co_code is a copy cached at its first read.
  static uint64_t CodeDigest(PyObject* code_object) {
    if (code_object == nullptr || !PyCode_Check(code_object)) return 0;
    auto* code = reinterpret_cast<PyCodeObject*>(code_object);
    uint64_t h = 1469598103934665603ULL;  // FNV-1a
    auto mix = [&h](const void* data, size_t size) {
      const auto* bytes = static_cast<const unsigned char*>(data);
      for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
    };
    auto mix_pointer = [&mix](const void* p) { mix(&p, sizeof(p)); };
    auto mix_int = [&mix](long v) { mix(&v, sizeof(v)); };
    mix_int(static_cast<long>(Py_SIZE(code)));  // the bytecode's length
    for (PyObject* tuple : {code->co_consts, code->co_names, code->co_localsplusnames}) {
      mix_pointer(tuple);
      if (tuple != nullptr && PyTuple_Check(tuple)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i)
          mix_pointer(PyTuple_GET_ITEM(tuple, i));
      }
    }
    mix_pointer(code->co_exceptiontable);
    for (long v :
         {static_cast<long>(code->co_flags), static_cast<long>(code->co_argcount),
          static_cast<long>(code->co_posonlyargcount), static_cast<long>(code->co_kwonlyargcount),
          static_cast<long>(code->co_stacksize), static_cast<long>(code->co_nlocalsplus),
          static_cast<long>(code->co_firstlineno)})
      mix_int(v);
    return h;
  }
  static Fingerprint FingerprintOf(PyObject* value) {
    Fingerprint f;
    if (value == nullptr) return f;
    f.type = Py_TYPE(value);
    if (PyCFunction_Check(value)) {
      auto* c = reinterpret_cast<PyCFunctionObject*>(value);
      const PyMethodDef* def = c->m_ml;
      f.fields = {def,
                  def != nullptr ? reinterpret_cast<const void*>(def->ml_meth) : nullptr,
                  def != nullptr
                      ? reinterpret_cast<const void*>(static_cast<intptr_t>(def->ml_flags))
                      : nullptr,
                  c->m_self,
                  reinterpret_cast<const void*>(c->vectorcall),
                  c->m_module};
    } else if (PyFunction_Check(value)) {
      auto* fn = reinterpret_cast<PyFunctionObject*>(value);
      f.fields = {fn->func_code,       fn->func_globals, fn->func_defaults,
                  fn->func_kwdefaults, fn->func_closure, fn->func_builtins};
      f.code = CodeDigest(fn->func_code);
    } else if (Py_IS_TYPE(value, &PyMethodDescr_Type) ||
               Py_IS_TYPE(value, &PyClassMethodDescr_Type)) {
      auto* d = reinterpret_cast<PyMethodDescrObject*>(value);
      const PyMethodDef* def = d->d_method;
      f.fields = {def, def != nullptr ? reinterpret_cast<const void*>(def->ml_meth) : nullptr,
                  reinterpret_cast<const void*>(d->vectorcall), d->d_common.d_type};
    } else if (Py_IS_TYPE(value, &PyWrapperDescr_Type)) {
      auto* d = reinterpret_cast<PyWrapperDescrObject*>(value);
      f.fields = {d->d_base, d->d_wrapped, d->d_common.d_type};
    } else if (PyModule_Check(value)) {
      f.fields = {PyModule_GetDict(value)};
    }
    return f;
  }

  struct Guarded {
    py::object owner, key, value;  // value null: the name was absent
    std::string label;
    Fingerprint print;  // of value, when guarded or rebaselined
  };

  // With the GIL held: whether a guarded name or an owner's type changed since the last check;
  // the first change seen is reported. Pointer comparisons, dictionary walks and lookups of plain
  // str keys among plain str keys only: no Python code runs.
  bool ClockTampered(bool full = false) {
    if (keys_tampered_) return true;
    std::string what;
    for (const auto& [owner, type] : owner_types_) {
      if (reinterpret_cast<PyObject*>(Py_TYPE(owner.ptr())) != type.ptr()) {
        what = absl::StrCat("the type of ", OwnerName(owner), " (its __class__ was assigned)");
        break;
      }
    }
    // Fast path: a dictionary's version tag changes with every change to it (CPython 3.11-3.13),
    // so when no owner's tag moved, no entry did. Otherwise every entry is compared (a lazy
    // import adding a submodule to torch moves its tag and changes nothing guarded).
    if (what.empty() && !full && DictsUnchanged()) return tamper_reported_;
    // Every key of every owner's namespace a plain str before any lookup: a lookup compares keys
    // whose hashes match, and a key of a str subclass answers that comparison with its own __eq__
    // (Python code, here, after the CPU clock stopped and before the watch is on: a red team put
    // one beside "from_dlpack" in torch.utils.dlpack's namespace that computed the answer, and
    // passed at 14x, 2026-12-05 evening). Walking a dictionary runs no code.
    for (const auto& [owner, type] : owner_types_) {
      if (!what.empty()) break;
      PyObject* dict = DictOf(owner.ptr());
      if (dict == nullptr) continue;
      Py_ssize_t pos = 0;
      PyObject *key = nullptr, *value = nullptr;
      while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
          keys_tampered_ = true;
          what = absl::StrCat("a key that is not a plain str put in ", OwnerName(owner),
                              "'s namespace (its comparison would run when a name is looked up)");
          break;
        }
      }
    }
    for (size_t i = 0; what.empty() && i < guarded_.size(); ++i) {
      const Guarded& g = guarded_[i];
      PyObject* dict = DictOf(g.owner.ptr());
      PyObject* now = dict != nullptr ? PyDict_GetItemWithError(dict, g.key.ptr()) : nullptr;
      if (now == nullptr) PyErr_Clear();
      if (now != g.value.ptr()) {
        what = g.value ? (now != nullptr ? absl::StrCat(g.label, " replaced")
                                         : absl::StrCat(g.label, " deleted"))
                       : absl::StrCat(g.label, " added (it shadows what the clock used)");
      } else if (full && now != nullptr && !(FingerprintOf(now) == g.print)) {
        what = absl::StrCat(g.label,
                            " rewritten in place (the same object, made of another type or "
                            "function: only raw memory does that)");
      }
    }
    if (what.empty()) {
      NoteDictVersions();
      return tamper_reported_;
    }
    tamper_reported_ = true;
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    RecordRuntimeViolation(
        "runtime.clock_tampered",
        "a name the judge's clock, its handling of the outputs or its check of the DSL's "
        "compiles looks up when it runs was changed by kernel.py (the judge would run the "
        "kernel's code after the clock stopped, read a forged time, or let a compile through "
        "unchecked): the call is not timed by that clock",
        what);
    // Tampered from here on (every later call timed by the monotonic clock), and what was
    // reported is the state a further change is measured from, so that one report does not
    // blind the guard: the worker's calibration, before kernel.py exists, turns a report into a
    // warning of the judge's own, and a guard that reported once and then nothing more hid the
    // kernel's own change after it (found 2026-12-06, guarding entries the worker itself
    // removes). A key that is not a plain str cannot be compared past: nothing more is checked.
    if (!keys_tampered_) Rebaseline();
    PyErr_Restore(type, value, tb);
    return true;
  }

  // With the GIL held, every owner's keys plain str: the guarded names as they are now.
  void Rebaseline() {
    for (Guarded& g : guarded_) {
      PyObject* dict = DictOf(g.owner.ptr());
      PyObject* now = dict != nullptr ? PyDict_GetItemWithError(dict, g.key.ptr()) : nullptr;
      if (now == nullptr) PyErr_Clear();
      g.value = now != nullptr ? py::reinterpret_borrow<py::object>(now) : py::object();
      g.print = FingerprintOf(g.value.ptr());
    }
    for (auto& [owner, type] : owner_types_)
      type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(owner.ptr())));
    dict_versions_.clear();
  }

  static PyObject* DictOf(PyObject* owner) {  // borrowed
    if (PyModule_Check(owner)) return PyModule_GetDict(owner);
    if (PyDict_CheckExact(owner)) return owner;
    return reinterpret_cast<PyTypeObject*>(owner)->tp_dict;
  }

#if PY_VERSION_HEX < 0x030E0000
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  static uint64_t VersionOf(PyObject* dict) {
    return reinterpret_cast<PyDictObject*>(dict)->ma_version_tag;
  }
#pragma GCC diagnostic pop
  bool DictsUnchanged() const {
    if (dict_versions_.empty()) return false;
    for (const auto& [dict, version] : dict_versions_)
      if (VersionOf(dict.ptr()) != version) return false;
    return true;
  }
  void NoteDictVersions() {
    if (dict_versions_.empty()) {
      for (const auto& [owner, type] : owner_types_) {
        PyObject* dict = DictOf(owner.ptr());
        if (dict != nullptr)
          dict_versions_.emplace_back(py::reinterpret_borrow<py::object>(dict), 0);
      }
    }
    for (auto& [dict, version] : dict_versions_) version = VersionOf(dict.ptr());
  }
#else
  bool DictsUnchanged() const { return false; }  // no version tag to read: every entry compared
  void NoteDictVersions() {}
#endif

  static std::string OwnerName(const py::object& owner) {
    if (PyModule_Check(owner.ptr())) {
      PyObject* name = PyModule_GetNameObject(owner.ptr());
      if (name == nullptr) {
        PyErr_Clear();
        return "a module";
      }
      std::string out = Utf8(name);
      Py_DECREF(name);
      return out;
    }
    if (owner.ptr() == PySys_GetObject("modules")) return "sys.modules";  // borrowed; no error
    if (PyDict_CheckExact(owner.ptr())) {
      PyObject* name = PyDict_GetItemString(owner.ptr(), "__name__");  // borrowed
      return absl::StrCat("the globals of ", name != nullptr ? Utf8(name) : "a function");
    }
    auto [name, qualname, module] = TypeNames(reinterpret_cast<PyTypeObject*>(owner.ptr()));
    return absl::StrCat(module, ".", qualname);
  }

  py::object clock_start_, clock_stop_, clock_read_;
  std::vector<Guarded> guarded_;                                // guarded by the GIL
  std::vector<std::pair<py::object, py::object>> owner_types_;  // (owner, its type then)
  bool tamper_reported_ = false;                                // guarded by the GIL
  bool keys_tampered_ = false;  // a key not a plain str: no lookup is safe (GIL)
  std::vector<std::pair<py::object, uint64_t>> dict_versions_;  // owners' dicts, their tags
  bool marked_ = false;                                         // guarded by the GIL
  int pending_size_ = 0;               // the pending-call queue's size (0: not measured, no hold)
  int tokens_ = 0;                     // the last job's tokens, to be found run (GIL)
  bool main_thread_submits_ = false;   // made on the main thread, which runs the queue (Submit)
  int interpreter_queue_size_ = -1;    // 3.12's queue for any thread (-1: none)
  std::set<ThreadKey> known_threads_;  // guarded by the GIL
  bool holding_ = false;               // guarded by the GIL
  bool collector_was_enabled_ = true;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread::id thread_id_;
  int native_id_ = 0;   // its kernel thread id, in the worker's PID namespace
  bool ready_ = false;  // the thread has its Python thread state
  bool busy_ = false;
  bool has_job_ = false;
  std::atomic<bool> posted_{false};  // has_job_, readable without the mutex (SpinForJob)
  const int spin_us_;                // how long the thread polls for a job before it sleeps
  bool done_ = false;
  Job job_;
  PyObject* result_ = nullptr;
};

}  // namespace

std::vector<std::tuple<std::string, int, std::string>> TracebackEntries(PyObject* tb) {
  // A traceback's (file, line, function) entries, read in C: a Python walk reads tb.tb_frame, an
  // audited attribute that the worker's own code is not trusted for once kernel.py is loaded.
  std::vector<std::tuple<std::string, int, std::string>> out;
  while (tb != nullptr && tb != Py_None && PyTraceBack_Check(tb) && out.size() < 512) {
    auto* entry = reinterpret_cast<PyTracebackObject*>(tb);
    PyCodeObject* code = PyFrame_GetCode(entry->tb_frame);  // new reference
    // tb_lineno is computed from the instruction; a negative or missing one reads as 0.
    PyObject* line = PyObject_GetAttrString(tb, "tb_lineno");
    int number = 0;
    if (line != nullptr && PyLong_Check(line)) number = static_cast<int>(PyLong_AsLong(line));
    if (PyErr_Occurred()) PyErr_Clear();
    Py_XDECREF(line);
    out.emplace_back(Utf8(code->co_filename), number < 0 ? 0 : number, Utf8(code->co_name));
    Py_DECREF(code);
    tb = reinterpret_cast<PyObject*>(entry->tb_next);
  }
  return out;
}

void RegisterKernelThread(py::module_& m) {
  py::class_<KernelThread, std::unique_ptr<KernelThread, py::nodelete>>(
      m, "KernelThread",
      "A thread of the worker's own, started in C++, on which kernel.py is imported and solve is "
      "called: its Python stack holds nothing of the judge's, so no frame of kernel.py's leads to "
      "the worker's (kernel_thread.cc).")
      .def(py::init([](py::object clock, int spin_us) {
             return std::unique_ptr<KernelThread, py::nodelete>(new KernelThread(clock, spin_us));
           }),
           py::arg("clock") = py::none(), py::arg("spin_us") = 0,
           "clock: for timed calls, a CallClock (start() / stop() -> seconds) or a clock in "
           "parts (start() / stop() / read() -> seconds: values.PublishedClock, whose stop() "
           "closes the timed window before the watch on kernel code goes on); None times them "
           "with the monotonic clock. spin_us: how long the thread polls for its next job (its CPU "
           "busy, no GIL held) before it sleeps; 0, sleep at once (the judge's "
           "choice: MeasurementPlan.kernel_thread_spin_us).")
      .def(
          "call",
          [](KernelThread& thread, py::object fn, py::tuple args, bool timed) {
            return thread.Call(fn, args, timed);
          },
          py::arg("fn"), py::arg("args") = py::tuple(), py::arg("timed") = false,
          "fn(*args) on the kernel's thread, the caller's thread waiting (the GIL released): "
          "('ok', seconds, value), seconds by the clock when timed (start, fn, stop on that "
          "thread) else 0; or ('raised', name, qualname, module, message, [(file, line, "
          "function)]) when fn raised (anything: SystemExit too), described and released there. "
          "The cyclic collector is held off from fn's return until release_collector() (or the "
          "next call).")
      .def_property_readonly("native_id", &KernelThread::native_id,
                             "The thread's id (gettid) in this process's PID namespace: the "
                             "worker tells the host in prepare, before kernel.py exists, and the "
                             "host reads the thread's CPU time around each call.")
      .def("mark_threads", &KernelThread::MarkThreads,
           "Every Python thread there is now is the judge's: from here on, a Python thread "
           "that was not there, alive when a call returns, is a runtime.thread violation "
           "(reported with the runtime audit's findings). Called before kernel.py is imported.")
      .def("guard_clock", &KernelThread::GuardClock, py::arg("entries"),
           "The names the clock looks up when it runs, [(owner, name, present, value)] "
           "(values.clock_reach): each timed call, before the clock's window closes, they must "
           "be as they were, else a runtime.clock_tampered violation and the call timed by the "
           "monotonic clock. Called before kernel.py is imported.")
      .def_property_readonly("guarded", &KernelThread::guarded,
                             "How many names guard_clock guards.")
      .def("check_guard", &KernelThread::CheckGuard,
           "Whether a name guard_clock guards changed since the last check (a "
           "runtime.clock_tampered violation): the worker checks again before each reply.")
      .def(
          "between",
          [](KernelThread& thread, py::object fn, py::tuple args) {
            return thread.Between(fn, args);
          },
          py::arg("fn"), py::arg("args") = py::tuple(),
          "fn(*args) on the kernel's thread as work between calls: the watch on kernel code "
          "stays on and the cyclic collector held. The worker drops a call's objects this way, so "
          "that a finaliser of the kernel's runs there, never on the worker's main thread. "
          "('ok', 0.0, value), or ('raised', ...) as call() describes it.")
      .def("hold_collector", &KernelThread::HoldCollector,
           "No cyclic collection from here until release_collector() or the next call starts: "
           "the worker holds it from a RELEASE until the next call, so that no finaliser of the "
           "kernel's runs while the host writes that call's inputs into reused memory.")
      .def("release_collector", &KernelThread::ReleaseCollector,
           "The cyclic collector back as it was, once the worker has taken its snapshot of what "
           "the last call returned.");
}

}  // namespace mkb::python
