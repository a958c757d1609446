//===- ModelHeader.cpp - model.h, the C API of a compiled model -----------===//

#include "SignatureInternal.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

using namespace tgc;
using namespace tgc::detail;

/// The user API, identical to the TGC_MODEL_API_V2 block of
/// include/tgc/Runtime/tgc_runtime.h (less the export attributes), so that
/// several model headers and the runtime header can be included together.
static const char *const kModelApi = R"(#ifndef TGC_MODEL_API_V2
#define TGC_MODEL_API_V2

/* An instance of a compiled model (not thread-safe: one call at a time). */
typedef struct tgc_model tgc_model;

/* Frees an instance (NULL allowed); outputs already returned stay valid. */
void tgc_model_destroy(tgc_model *m);
/* The last error on m, or with m == NULL the last failed create on this
   thread; "" if none. */
const char *tgc_model_last_error(const tgc_model *m);
const char *tgc_model_name(const tgc_model *m);
int64_t tgc_model_num_inputs(const tgc_model *m);
int64_t tgc_model_num_outputs(const tgc_model *m);
const char *tgc_model_input_name(const tgc_model *m, int64_t i);
const char *tgc_model_output_name(const tgc_model *m, int64_t i);
/* 1 if run writes new values into input i in place, 0 if not, -1 if out of
   range. */
int tgc_model_input_is_mutated(const tgc_model *m, int64_t i);
/* Runs the model on CPU tensors (any strides). Each outputs[i] is a new
   contiguous tensor; free it with outputs[i]->deleter(outputs[i]).
   Returns 0, or non-zero with tgc_model_last_error(m) set. */
int tgc_model_run(tgc_model *m, DLTensor *const *inputs, int64_t num_inputs,
                  DLManagedTensor **outputs, int64_t num_outputs);
/* CUDA models: run on CUDA stream `stream` without waiting for the work (NULL: the
   legacy default stream); set the stream of all calls. CPU models take NULL. */
int tgc_model_run_async(tgc_model *m, void *stream, DLTensor *const *inputs,
                        int64_t num_inputs, DLManagedTensor **outputs,
                        int64_t num_outputs);
int tgc_model_set_cuda_stream(tgc_model *m, void *stream);
/* kDLCPU (1) or kDLCUDA (2): where the model runs. */
int tgc_model_device_type(const tgc_model *m);
/* New contiguous copies of a CPU tensor on the model's device, and back. */
int tgc_model_copy_to_device(tgc_model *m, const DLTensor *src,
                             DLManagedTensor **out);
int tgc_model_copy_to_host(tgc_model *m, const DLTensor *src,
                           DLManagedTensor **out);
/* Threads of this instance's calls (n < 1: TGC_NUM_THREADS, else the CPUs
   the process may run on). Results are bit-identical for a given count. */
void tgc_model_set_num_threads(tgc_model *m, int n);
int tgc_model_num_threads(const tgc_model *m);
/* Parameters, buffers and constants, by fully qualified name. */
int64_t tgc_model_num_state(const tgc_model *m);
const char *tgc_model_state_name(const tgc_model *m, int64_t i);
/* 0 parameter, 1 buffer, 2 constant; -1 if out of range. */
int tgc_model_state_kind(const tgc_model *m, int64_t i);
int tgc_model_state_dtype(tgc_model *m, const char *name, DLDataType *dtype);
/* Sets *rank; fills sizes[0..rank) if rank <= max_rank, else fails. */
int tgc_model_state_shape(tgc_model *m, const char *name, int64_t *rank,
                          int64_t *sizes, int64_t max_rank);
int tgc_model_get_state(tgc_model *m, const char *name, DLTensor *dst);
int tgc_model_set_state(tgc_model *m, const char *name, const DLTensor *src);

/* Training (models compiled with --train). */
int tgc_model_is_trainable(const tgc_model *m);
/* run that keeps the saved values for one tgc_model_backward. */
int tgc_model_run_train(tgc_model *m, DLTensor *const *inputs,
                        int64_t num_inputs, DLManagedTensor **outputs,
                        int64_t num_outputs);
int64_t tgc_model_num_gradients(const tgc_model *m);
/* The parameter fqn, or input.N for user input N. */
const char *tgc_model_gradient_name(const tgc_model *m, int64_t i);
/* One gradient per user output (NULL allowed where the output has none);
   consumes the saved values and returns num_gradients new tensors. */
int tgc_model_backward(tgc_model *m, DLTensor *const *grad_outputs,
                       int64_t num_grad_outputs, DLManagedTensor **grads,
                       int64_t num_grads);
/* 1 if output i takes a gradient in backward, 0 if not, -1 out of range. */
int tgc_model_output_has_gradient(const tgc_model *m, int64_t i);
int64_t tgc_model_saved_count(const tgc_model *m);
/* Bytes kept by the last run_train. */
int64_t tgc_model_saved_bytes(const tgc_model *m);

#endif /* TGC_MODEL_API_V2 */
)";

/// Text safe inside a C block comment.
static std::string commentSafe(const std::string &text) {
  std::string safe;
  for (size_t i = 0; i < text.size(); ++i) {
    safe += text[i];
    if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/')
      safe += ' ';
  }
  return safe;
}

static std::string describeTensor(const std::string &name, DType dtype,
                                  const std::vector<SizeExpr> &sizes,
                                  const std::vector<SymbolInfo> &symbols) {
  std::string text = commentSafe(name) + ": " + dtypeName(dtype) + "[";
  for (size_t d = 0; d < sizes.size(); ++d)
    text += (d ? ", " : "") + commentSafe(printSizeExpr(sizes[d], symbols));
  return text + "]";
}

/// The comment describing `signature`'s model and its `<name>_create` prototype.
static void describeModel(std::ostringstream &out, const ModelSignature &signature) {
  out << "/* Creates an instance of '" << signature.name
      << "' (returns 0; on failure *out is NULL and\n"
      << "   tgc_model_last_error(NULL) says why).\n";
  bool anyInput = false, anyMutated = false;
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const ArgInfo &arg = signature.args[i];
    if (arg.kind != ArgKind::UserInput)
      continue;
    out << (anyInput ? "" : "   Inputs, in order:\n") << "     "
        << describeTensor(arg.name, arg.dtype, arg.sizes, signature.symbols)
        << (isMutated(signature, i) ? "  (updated in place)" : "") << "\n";
    anyInput = true;
    anyMutated |= isMutated(signature, i);
  }
  bool anyOutput = false;
  int anyGradient = 0;
  for (const ResultInfo &result : signature.results) {
    if (result.kind != ResultKind::UserOutput)
      continue;
    out << (anyOutput ? "" : "   Outputs, in order:\n") << "     "
        << describeTensor(result.name, result.dtype, result.sizes, signature.symbols)
        << (signature.slots.count(uint32_t(&result - &signature.results[0]))
                ? "  (Python state " +
                      commentSafe(signature.slots.at(uint32_t(&result - &signature.results[0]))) +
                      ")"
                : "")
        << "\n";
    anyOutput = true;
  }
  for (const SymbolInfo &symbol : signature.symbols) {
    out << "   Symbol " << commentSafe(symbol.name) << " in [" << symbol.min << ", ";
    if (symbol.max == std::numeric_limits<int64_t>::max())
      out << "inf";
    else
      out << symbol.max;
    out << "]\n";
  }
  if (signature.backward)
    for (const ResultInfo &result : signature.backward->results)
      if (result.kind == ResultKind::Gradient)
        out << (anyGradient++ ? "" : "   Gradients (tgc_model_backward), in order:\n") << "     "
            << describeTensor(result.name, result.dtype, result.sizes, signature.symbols) << "\n";
  if (anyMutated)
    out << "   Inputs marked 'updated in place' receive new values on each "
           "run.\n";
  out << " */\n"
      << "int " << signature.name << "_create(tgc_model **out);\n\n";
}

/// model.h's opening: the include guard of `name`, the includes and the C API.
static std::string headerGuard(const std::string &name) {
  std::string guard = "TGC_MODEL_" + name + "_H";
  std::transform(guard.begin(), guard.end(), guard.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return guard;
}

static void openHeader(std::ostringstream &out, const std::string &name, const std::string &guard) {
  out << "/* " << name << ".h - C API of the tgc-compiled model '" << name
      << "'. Generated by tgc; do not edit. */\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#include <dlpack/dlpack.h>\n#include <stdint.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << kModelApi << "\n";
}

static void closeHeader(std::ostringstream &out, const std::string &guard) {
  out << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n"
      << "#endif /* " << guard << " */\n";
}

std::string tgc::writeModelHeader(const ModelSignature &signature) {
  std::string guard = headerGuard(signature.name);
  std::ostringstream out;
  openHeader(out, signature.name, guard);
  describeModel(out, signature);
  closeHeader(out, guard);
  return out.str();
}

std::string tgc::writeProgramHeader(const std::string &name,
                                    const std::vector<ModelSignature> &graphs) {
  std::string guard = headerGuard(name);
  std::ostringstream out;
  openHeader(out, name, guard);
  out << "/* '" << name << "' has graph breaks: it is " << graphs.size()
      << " models, run in the order\n   " << name
      << ".json's \"program\" says (docs/graph-breaks.md). */\n\n";
  for (const ModelSignature &graph : graphs)
    describeModel(out, graph);
  closeHeader(out, guard);
  return out.str();
}
