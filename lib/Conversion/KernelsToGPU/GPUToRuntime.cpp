// tgc-lower-gpu-to-runtime: the host side of the CUDA target's GPU ops as calls of the
// runtime (docs/cuda.md). The kernels' binary becomes data that the model's create
// function hands the runtime; each launch a call of tgc_rt_cuda_launch with the
// kernel's number and its parameters; each read-back a call of tgc_rt_cuda_read.
#include "tgc/Conversion/RuntimeCalls.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/MapVector.h"

namespace tgc {
#define GEN_PASS_DEF_LOWERGPUTORUNTIMEPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kLaunch = "tgc_rt_cuda_launch";
constexpr llvm::StringLiteral kRead = "tgc_rt_cuda_read";

/// The address of `memref`'s element 0 as a pointer: its aligned pointer plus its offset.
Value elementAddress(OpBuilder &b, Location loc, Value memref) {
  auto type = llvm::cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  unsigned bytes = std::max<unsigned>(1, (type.getElementTypeBitWidth() + 7) / 8);
  Value offset = arith::MulIOp::create(b, loc, meta.getOffset(),
                                       arith::ConstantIndexOp::create(b, loc, bytes));
  Value address = arith::AddIOp::create(b, loc, aligned, offset);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

/// The kernel parameters of launch operand `value`, as convert-gpu-to-nvvm lays out a
/// kernel's signature: a memref is its descriptor's fields (allocated and aligned
/// pointer, offset, sizes, strides; the kernel reads only the aligned pointer, so it is
/// passed for both), an index an i64, anything else itself.
void appendParameters(OpBuilder &b, Location loc, Value value, SmallVectorImpl<Value> &params) {
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value index) -> Value { return arith::IndexCastOp::create(b, loc, i64, index); };
  if (llvm::isa<MemRefType>(value.getType())) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, value);
    Value pointer = tgc::alignedPointer(b, loc, value);
    params.push_back(pointer);
    params.push_back(pointer);
    params.push_back(toI64(meta.getOffset()));
    for (Value size : meta.getSizes())
      params.push_back(toI64(size));
    for (Value stride : meta.getStrides())
      params.push_back(toI64(stride));
    return;
  }
  if (value.getType().isIndex()) {
    params.push_back(toI64(value));
    return;
  }
  params.push_back(value);
}

struct LowerGPUToRuntimePass : public tgc::impl::LowerGPUToRuntimePassBase<LowerGPUToRuntimePass> {
  using LowerGPUToRuntimePassBase::LowerGPUToRuntimePassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto ptr = LLVM::LLVMPointerType::get(ctx);

    // The kernels, numbered in the order of their first launch.
    llvm::MapVector<StringAttr, int32_t> kernels;
    module.walk([&](gpu::LaunchFuncOp launch) {
      kernels.insert({launch.getKernelName(), int32_t(kernels.size())});
    });
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    if (binaries.size() > 1) {
      binaries[1].emitError("expected one GPU binary (tgc-merge-gpu-modules)");
      return signalPassFailure();
    }
    // The image: the fatbin, the kernels' names and the flags. A model without launches
    // (its work all GEMMs) has an empty one: it is still a CUDA model.
    StringRef bytes;
    Location loc = module.getLoc();
    if (!binaries.empty()) {
      gpu::BinaryOp binary = binaries.front();
      auto objects = binary.getObjects().getAsRange<gpu::ObjectAttr>();
      if (llvm::range_size(objects) != 1) {
        binary.emitError("expected one object in the GPU binary");
        return signalPassFailure();
      }
      gpu::ObjectAttr object = *objects.begin();
      if (object.getFormat() != gpu::CompilationTarget::Fatbin) {
        binary.emitError("expected a fatbin object in the GPU binary");
        return signalPassFailure();
      }
      bytes = object.getObject().getValue();
      loc = binary.getLoc();
    } else if (!kernels.empty()) {
      module.emitError("GPU launches without a GPU binary");
      return signalPassFailure();
    }
    b.setInsertionPointToEnd(module.getBody());
    // The fatbin in the section where CUDA's tools look for one (cuobjdump), aligned as the
    // driver wants it.
    auto fatbin = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, "tgc_cuda_fatbin", b.getStringAttr(bytes),
        /*alignment=*/8);
    fatbin.setSection(".nv_fatbin");
    std::string names;
    for (auto &[name, index] : kernels) {
      names += name.getValue();
      names.push_back('\0');
    }
    LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), names.size()),
                           /*isConstant=*/true, LLVM::Linkage::Internal, "tgc_cuda_kernel_names",
                           b.getStringAttr(names), /*alignment=*/1);
    // tgc_cuda_image.flags (TGC_CUDA_ALLOW_TF32).
    LLVM::GlobalOp::create(b, loc, i64, /*isConstant=*/true, LLVM::Linkage::Internal,
                           "tgc_cuda_flags", b.getI64IntegerAttr(allowTf32 ? 1 : 0),
                           /*alignment=*/8);
    for (gpu::BinaryOp binary : binaries)
      binary.erase();

    // Launches: the parameters' values in stack slots (allocated once, in the entry
    // block of their function), an array of pointers to them, and the call.
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.hasClusterSize()) {
        launch.emitError("unexpected asynchronous or clustered launch");
        return signalPassFailure();
      }
      Location loc = launch.getLoc();
      auto func = launch->getParentOfType<FunctionOpInterface>();
      b.setInsertionPoint(launch);
      SmallVector<Value> params;
      for (Value operand : launch.getKernelOperands())
        appendParameters(b, loc, operand, params);
      OpBuilder entry = OpBuilder::atBlockBegin(&func.getFunctionBody().front());
      Value one = LLVM::ConstantOp::create(entry, loc, i64, entry.getI64IntegerAttr(1));
      Value array = LLVM::AllocaOp::create(
          entry, loc, ptr, ptr,
          LLVM::ConstantOp::create(entry, loc, i64,
                                   entry.getI64IntegerAttr(std::max<size_t>(1, params.size()))));
      for (auto [i, param] : llvm::enumerate(params)) {
        Value slot = LLVM::AllocaOp::create(entry, loc, ptr, param.getType(), one);
        LLVM::StoreOp::create(b, loc, param, slot);
        Value at = LLVM::GEPOp::create(b, loc, ptr, ptr, array, ArrayRef<LLVM::GEPArg>{int32_t(i)});
        LLVM::StoreOp::create(b, loc, slot, at);
      }
      auto toI64 = [&](Value index) -> Value {
        return arith::IndexCastOp::create(b, loc, i64, index);
      };
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      Value shared = launch.getDynamicSharedMemorySize()
                         ? launch.getDynamicSharedMemorySize()
                         : arith::ConstantIntOp::create(b, loc, i32, 0).getResult();
      SmallVector<Value> args = {
          arith::ConstantIntOp::create(b, loc, i32, kernels.lookup(launch.getKernelName())),
          toI64(grid.x),
          toI64(grid.y),
          toI64(grid.z),
          toI64(block.x),
          toI64(block.y),
          toI64(block.z),
          shared,
          array};
      func::FuncOp helper =
          tgc::declareRuntimeHelper(b, module, kLaunch, ValueRange(args).getTypes());
      func::CallOp::create(b, loc, helper, args);
      launch.erase();
    }

    // Read-backs: a synchronous copy from the device into the host buffer.
    SmallVector<gpu::MemcpyOp> copies;
    module.walk([&](gpu::MemcpyOp copy) { copies.push_back(copy); });
    for (gpu::MemcpyOp copy : copies) {
      if (copy.getAsyncToken() || !copy.getAsyncDependencies().empty()) {
        copy.emitError("unexpected asynchronous copy");
        return signalPassFailure();
      }
      auto type = llvm::cast<MemRefType>(copy.getDst().getType());
      if (!copy.getDst().getDefiningOp<memref::AllocaOp>() || !type.hasStaticShape() ||
          type.getNumElements() != 1) {
        copy.emitError("expected a read-back of one element into a host stack buffer");
        return signalPassFailure();
      }
      Location loc = copy.getLoc();
      b.setInsertionPoint(copy);
      unsigned bytes = std::max<unsigned>(1, (type.getElementTypeBitWidth() + 7) / 8);
      SmallVector<Value> args = {elementAddress(b, loc, copy.getDst()),
                                 elementAddress(b, loc, copy.getSrc()),
                                 arith::ConstantIntOp::create(b, loc, i64, bytes)};
      func::FuncOp helper =
          tgc::declareRuntimeHelper(b, module, kRead, ValueRange(args).getTypes());
      func::CallOp::create(b, loc, helper, args);
      copy.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
