// The shape part of the table of torch callables: views and reshapes, splits and
// concatenation, in-place writes, and tensor creation.
#include "TorchFunctionTable.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

/// Tensor.split/torch.split: an int is the chunk size, a list the sizes.
static llvm::Error splitSizeArgument(BoundCall &call) {
  renameArgument(call, "split_size_or_sections", "split_size");
  return llvm::Error::success();
}
static llvm::Error splitSectionsArgument(BoundCall &call) {
  renameArgument(call, "split_size_or_sections", "split_sizes");
  renameArgument(call, "split_size", "split_sizes");
  return llvm::Error::success();
}

/// narrow(self, dim, start, length) is slice(self, dim, start, start + length).
static llvm::Error narrowAsSlice(BoundCall &call) {
  AtenValue length = takeArgument(call, "length");
  AtenValue *start = findArgument(call, "start");
  if (!start || start->kind != AtenValue::Kind::Int || length.kind != AtenValue::Kind::Int)
    return bindingError("narrow needs int start and length");
  call.arguments.push_back({"end", AtenValue::integer(start->size + length.size)});
  return llvm::Error::success();
}

/// Views and shapes.
static void addViews(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.Tensor.view"},
       {{TGC_SCHEMA("view(Tensor(a) self, SymInt[] size)"), "aten.view.default"}}},
      {{"torch.reshape", "torch.Tensor.reshape"},
       {{TGC_SCHEMA("reshape(Tensor(a) self, SymInt[] shape)"), "aten.reshape.default"}}},
      {{"torch.diff", "torch.Tensor.diff"},
       {{TGC_SCHEMA("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? "
                    "append=None)"),
         "aten.diff.default"}}},
      {{"torch.flip", "torch.Tensor.flip"},
       {{TGC_SCHEMA("flip(Tensor self, int[] dims)"), "aten.flip.default"}}},
      {{"torch.roll", "torch.Tensor.roll"},
       {{TGC_SCHEMA("roll(Tensor self, SymInt[1] shifts, int[1] dims=[])"), "aten.roll.default"}}},
      {{"torch.permute", "torch.Tensor.permute"},
       {{TGC_SCHEMA("permute(Tensor(a) self, int[] dims)"), "aten.permute.default"}}},
      {{"torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.Tensor.transpose",
        "torch.Tensor.swapaxes", "torch.Tensor.swapdims"},
       {{TGC_SCHEMA("transpose.int(Tensor(a) self, int dim0, int dim1)"), "aten.transpose.int"}}},
      {{"torch.Tensor.transpose_"},
       {{TGC_SCHEMA("transpose_(Tensor(a!) self, int dim0, int dim1)"),
         "aten.transpose_.default"}}},
      {{"torch.t", "torch.Tensor.t"}, {{TGC_SCHEMA("t(Tensor(a) self)"), "aten.t.default"}}},
      {{"torch.Tensor.t_"}, {{TGC_SCHEMA("t_(Tensor(a!) self)"), "aten.t_.default"}}},
      {{"torch.Tensor.expand_as"},
       {{TGC_SCHEMA("expand_as(Tensor(a) self, Tensor other)"), "aten.expand_as.default"}}},
      {{"torch.Tensor.view_as"},
       {{TGC_SCHEMA("view_as(Tensor(a) self, Tensor other)"), "aten.view_as.default"}}},
      {{"torch.Tensor.reshape_as"},
       {{TGC_SCHEMA("reshape_as(Tensor(a) self, Tensor other)"), "aten.reshape_as.default"}}},
      {{"torch.sort", "torch.Tensor.sort"},
       {{"sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
         "indices)",
         "aten.sort.default"},
        {"sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
         "(Tensor values, Tensor indices)",
         "aten.sort.stable"}}},
      {{"torch.topk", "torch.Tensor.topk"},
       {{"topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
         "(Tensor values, Tensor indices)",
         "aten.topk.default"}}},
      {{"torch.Tensor.repeat"},
       {{TGC_SCHEMA("repeat(Tensor self, SymInt[] repeats)"), "aten.repeat.default"}}},
      {{"torch.Tensor.expand"},
       {{TGC_SCHEMA("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False)"),
         "aten.expand.default"}}},
      {{"torch.unsqueeze", "torch.Tensor.unsqueeze"},
       {{TGC_SCHEMA("unsqueeze(Tensor(a) self, int dim)"), "aten.unsqueeze.default"}}},
      {{"torch.Tensor.unsqueeze_"},
       {{TGC_SCHEMA("unsqueeze_(Tensor(a!) self, int dim)"), "aten.unsqueeze_.default"}}},
      {{"torch.squeeze", "torch.Tensor.squeeze"},
       {{TGC_SCHEMA("squeeze(Tensor(a) self)"), "aten.squeeze.default"},
        {TGC_SCHEMA("squeeze.dim(Tensor(a) self, int dim)"), "aten.squeeze.dim"},
        {TGC_SCHEMA("squeeze.dims(Tensor(a) self, int[] dim)"), "aten.squeeze.dims"}}},
      {{"torch.Tensor.squeeze_"},
       {{TGC_SCHEMA("squeeze_(Tensor(a!) self)"), "aten.squeeze_.default"},
        {TGC_SCHEMA("squeeze_.dim(Tensor(a!) self, int dim)"), "aten.squeeze_.dim"},
        {TGC_SCHEMA("squeeze_.dims(Tensor(a!) self, int[] dim)"), "aten.squeeze_.dims"}}},
      {{"torch.flatten", "torch.Tensor.flatten"},
       {{TGC_SCHEMA("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1)"),
         "aten.flatten.using_ints"}}},
      {{"torch.unflatten", "torch.Tensor.unflatten"},
       {{TGC_SCHEMA("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes)"),
         "aten.unflatten.int"}}},
      {{"torch.select", "torch.Tensor.select"},
       {{TGC_SCHEMA("select.int(Tensor(a) self, int dim, SymInt index)"), "aten.select.int"}}},
      {{"torch.narrow", "torch.Tensor.narrow"},
       {{TGC_SCHEMA("narrow(Tensor(a) self, int dim, SymInt start, SymInt length)"),
         "aten.slice.Tensor", narrowAsSlice}}},
      {{"torch.Tensor.split"},
       {{TGC_LIST_SCHEMA("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0)"),
         "aten.split.Tensor"},
        {TGC_LIST_SCHEMA("split_with_sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0)"),
         "aten.split_with_sizes.default", splitSectionsArgument}}},
      {{"torch.split"},
       {{TGC_LIST_SCHEMA("split(Tensor self, SymInt split_size_or_sections, int dim=0)"),
         "aten.split.Tensor", splitSizeArgument},
        {TGC_LIST_SCHEMA("split(Tensor self, SymInt[] split_size_or_sections, int dim=0)"),
         "aten.split_with_sizes.default", splitSectionsArgument}}},
      {{"torch.split_with_sizes", "torch.Tensor.split_with_sizes"},
       {{TGC_LIST_SCHEMA("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0)"),
         "aten.split_with_sizes.default"}}},
      {{"torch.chunk", "torch.Tensor.chunk"},
       {{TGC_LIST_SCHEMA("chunk(Tensor(a -> *) self, int chunks, int dim=0)"),
         "aten.chunk.default"}}},
      {{"torch.Tensor.contiguous"},
       {{TGC_SCHEMA("contiguous(Tensor(a) self, *, MemoryFormat memory_format=0)"),
         "aten.contiguous.default"}}},
      {{"torch.clone", "torch.Tensor.clone"},
       {{TGC_SCHEMA("clone(Tensor self, *, MemoryFormat? memory_format=None)"),
         "aten.clone.default"}}},
      {{"torch.detach", "torch.Tensor.detach"},
       {{TGC_SCHEMA("detach(Tensor(a) self)"), "aten.detach.default"}}},
      {{"torch.cat", "torch.concat", "torch.concatenate"},
       {{TGC_SCHEMA("cat(Tensor[] tensors, int dim=0)"), "aten.cat.default"}}},
      {{"torch.stack"}, {{TGC_SCHEMA("stack(Tensor[] tensors, int dim=0)"), "aten.stack.default"}}},
      {{"torch.tril", "torch.Tensor.tril"},
       {{TGC_SCHEMA("tril(Tensor self, SymInt diagonal=0)"), "aten.tril.default"}}},
      {{"torch.triu", "torch.Tensor.triu"},
       {{TGC_SCHEMA("triu(Tensor self, SymInt diagonal=0)"), "aten.triu.default"}}},
  };
  llvm::append_range(table, functions);
}

/// In-place writes, and creation.
static void addWritesAndCreation(std::vector<TorchFunction> &table) {
  std::vector<TorchFunction> functions = {
      {{"torch.Tensor.copy_"},
       {{TGC_SCHEMA("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False)"),
         "aten.copy_.default"}}},
      {{"torch.Tensor.fill_"},
       {{TGC_SCHEMA("fill_.Scalar(Tensor(a!) self, Scalar value)"), "aten.fill_.Scalar"}}},
      {{"torch.Tensor.zero_"}, {{TGC_SCHEMA("zero_(Tensor(a!) self)"), "aten.zero_.default"}}},

      // Creation.
      {{"torch.zeros"},
       {{TGC_SCHEMA("zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                    "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.zeros.default"}}},
      {{"torch.ones"},
       {{TGC_SCHEMA("ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                    "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.ones.default"}}},
      {{"torch.empty"},
       {{TGC_SCHEMA(
             "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
             "Device? device=None, bool? pin_memory=None, bool requires_grad=False, "
             "MemoryFormat? memory_format=None)"),
         "aten.empty.memory_format"}}},
      {{"torch.full"},
       {{TGC_SCHEMA(
             "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.full.default"}}},
      {{"torch.zeros_like"},
       {{TGC_SCHEMA(
             "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
             "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
             "memory_format=None)"),
         "aten.zeros_like.default"}}},
      {{"torch.ones_like"},
       {{TGC_SCHEMA(
             "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
             "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
             "memory_format=None)"),
         "aten.ones_like.default"}}},
      {{"torch.empty_like"},
       {{TGC_SCHEMA(
             "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
             "device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? "
             "memory_format=None)"),
         "aten.empty_like.default"}}},
      {{"torch.full_like"},
       {{TGC_SCHEMA(
             "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False, "
             "MemoryFormat? memory_format=None)"),
         "aten.full_like.default"}}},
      {{"torch.Tensor.new_zeros"},
       {{TGC_SCHEMA(
             "new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.new_zeros.default"}}},
      {{"torch.Tensor.new_ones"},
       {{TGC_SCHEMA(
             "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.new_ones.default"}}},
      {{"torch.Tensor.new_empty"},
       {{TGC_SCHEMA(
             "new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.new_empty.default"}}},
      {{"torch.Tensor.new_full"},
       {{TGC_SCHEMA("new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? "
                    "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
                    "bool requires_grad=False)"),
         "aten.new_full.default"}}},
      {{"torch.arange"},
       {{TGC_SCHEMA("arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                    "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.arange.default"},
        {TGC_SCHEMA(
             "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.arange.start"},
        {TGC_SCHEMA(
             "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? "
             "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool "
             "requires_grad=False)"),
         "aten.arange.start_step"}}},
      {{"torch.scalar_tensor"},
       {{TGC_SCHEMA(
             "scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? "
             "device=None, bool? pin_memory=None, bool requires_grad=False)"),
         "aten.scalar_tensor.default"}}},
  };
  llvm::append_range(table, functions);
}

void tgc::py::addShapeTorchFunctions(std::vector<TorchFunction> &table) {
  addViews(table);
  addWritesAndCreation(table);
}
