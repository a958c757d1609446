// tgc-map-kernels-to-gpu and tgc-merge-gpu-modules: a bufferized model's memory work as
// GPU kernels, for the CUDA target (docs/cuda.md).
//
// Host functions (entries and the kernel functions they call) keep what describes
// buffers: allocations, views, descriptor arithmetic, loops around launches and calls.
// Everything that reads or writes a buffer's contents runs on the device: each loop nest
// of a structured op (and of a `memref.copy`) becomes a `gpu.launch` with one thread per
// parallel iteration, and the scalar memory work left in host code becomes one-thread
// launches.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"

namespace tgc {
#define GEN_PASS_DEF_MAPKERNELSTOGPUPASS
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#define GEN_PASS_DEF_DROPGPUOBJECTPROPERTIESPASS
#define GEN_PASS_DEF_EMULATEGPULAUNCHESPASS
#define GEN_PASS_DEF_LOWERDEALLOCATIONSONHOSTPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

/// Whether `value` is host memory: a stack buffer that a value read back from the device
/// lands in, or the entry's `arena_request` (where it stores the bytes its dynamic
/// temporaries need, for the runtime to read).
bool isHostMemory(Value value) {
  if (value.getDefiningOp<memref::AllocaOp>())
    return true;
  auto arg = llvm::dyn_cast<BlockArgument>(value);
  auto func = arg ? llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!func || arg.getOwner() != &func.getBody().front())
    return false;
  auto kind = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), tgc::attr::kKind);
  return kind && kind.getValue() == "arena_request";
}

/// Whether `op` reads or writes the contents of a buffer (as opposed to allocating,
/// freeing or describing one): work that must run on the device.
bool touchesContents(Operation *op) {
  if (isa<gpu::LaunchOp, gpu::MemcpyOp>(op))
    return false;
  auto memrefs = llvm::make_filter_range(
      op->getOperands(), [](Value v) { return llvm::isa<MemRefType>(v.getType()); });
  if (!memrefs.empty() && llvm::all_of(memrefs, isHostMemory))
    return false;
  auto interface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!interface)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  interface.getEffects(effects);
  return llvm::any_of(effects, [](const MemoryEffects::EffectInstance &effect) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect());
  });
}

/// Whether `op` may move into a device launch with the memory work around it: it has no
/// regions and no effects (index and float arithmetic, constants, views).
bool isMovable(Operation *op) { return op->getNumRegions() == 0 && isMemoryEffectFree(op); }

/// Whether `op` is device work: it reads or writes buffer contents, or it is control
/// flow (a scatter's sequential loop, a branch on a loaded value) whose regions hold only
/// device work and movable ops.
bool isDeviceWork(Operation *op) {
  if (touchesContents(op))
    return true;
  if (op->getNumRegions() == 0 || isa<gpu::LaunchOp>(op) || !isa<scf::SCFDialect>(op->getDialect()))
    return false;
  bool any = false;
  WalkResult result = op->walk([&](Operation *inner) {
    if (inner == op || inner->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    if (touchesContents(inner)) {
      any = true;
      return WalkResult::advance();
    }
    if (isMovable(inner) || (inner->getNumRegions() && isa<scf::SCFDialect>(inner->getDialect())))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return any && !result.wasInterrupted();
}

/// Reads element `indices` of device buffer `source` on the host: a copy of the element
/// into a stack buffer (`gpu.memcpy`, which waits for the device), then a load of it.
Value readOnHost(RewriterBase &rewriter, memref::LoadOp load) {
  Location loc = load.getLoc();
  MemRefType type = load.getMemRefType();
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(load.getIndices().begin(), load.getIndices().end());
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  SmallVector<int64_t> unitShape(rank, 1);
  auto hostType = MemRefType::get(unitShape, type.getElementType());
  Value element = memref::SubViewOp::create(rewriter, loc, load.getMemRef(), offsets, ones, ones);
  Value host = memref::AllocaOp::create(rewriter, loc, hostType);
  gpu::MemcpyOp::create(rewriter, loc, TypeRange(), ValueRange(), host, element);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  return memref::LoadOp::create(rewriter, loc, host, SmallVector<Value>(rank, zero));
}

/// A reshape to a shape the host wrote into a buffer (`tensor.from_elements` of sizes)
/// becomes a view with those sizes: the host never reads the buffer back. The reshape's
/// source is contiguous, so the view's strides are the row-major ones.
LogicalResult foldHostShape(RewriterBase &rewriter, memref::ReshapeOp reshape) {
  Value shape = reshape.getShape();
  auto alloc = shape.getDefiningOp<memref::AllocOp>();
  auto resultType = reshape.getType();
  int64_t rank = resultType.getRank();
  SmallVector<Value> sizes(rank);
  if (alloc) {
    for (Operation *user : alloc->getUsers()) {
      auto store = dyn_cast<memref::StoreOp>(user);
      if (!store || store.getMemRef() != shape || store->getBlock() != reshape->getBlock() ||
          !store->isBeforeInBlock(reshape))
        continue;
      std::optional<int64_t> at = getConstantIntValue(store.getIndices().front());
      if (!at || *at < 0 || *at >= rank || sizes[*at])
        return failure();
      sizes[*at] = store.getValueToStore();
    }
  }
  if (!resultType.getLayout().isIdentity())
    return failure();
  Location loc = reshape.getLoc();
  rewriter.setInsertionPoint(reshape);
  // Static sizes and strides as attributes (the result type has them), the others as
  // values; the identity layout has offset 0.
  SmallVector<OpFoldResult> sizeResults(rank), strides(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d))
      sizeResults[d] = rewriter.getIndexAttr(resultType.getDimSize(d));
    else if (sizes[d])
      sizeResults[d] = sizes[d];
    else
      return failure();
  }
  OpFoldResult stride = rewriter.getIndexAttr(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    std::optional<int64_t> inner = getConstantIntValue(stride),
                           size = getConstantIntValue(sizeResults[d]);
    if (inner && size && llvm::isa<Attribute>(stride) && llvm::isa<Attribute>(sizeResults[d]))
      stride = rewriter.getIndexAttr(*inner * *size);
    else
      stride = arith::MulIOp::create(rewriter, loc,
                                     getValueOrCreateConstantIndexOp(rewriter, loc, stride),
                                     getValueOrCreateConstantIndexOp(rewriter, loc, sizeResults[d]))
                   .getResult();
  }
  Value view = memref::ReinterpretCastOp::create(rewriter, loc, resultType, reshape.getSource(),
                                                 OpFoldResult(rewriter.getIndexAttr(0)),
                                                 sizeResults, strides);
  rewriter.replaceOp(reshape, view);
  // The shape buffer, written and freed and read by nobody else, goes.
  if (alloc && llvm::all_of(alloc->getUsers(), [](Operation *user) {
        return isa<memref::StoreOp, memref::DeallocOp>(user);
      })) {
    for (Operation *user : llvm::to_vector(alloc->getUsers()))
      rewriter.eraseOp(user);
    rewriter.eraseOp(alloc);
  }
  return success();
}

/// Replaces `loop` (nested in device code) by sequential loops, outermost first.
void serialize(RewriterBase &rewriter, scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> ivs;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    auto inner = scf::ForOp::create(rewriter, loc, lb, ub, step);
    ivs.push_back(inner.getInductionVar());
    rewriter.setInsertionPoint(inner.getBody()->getTerminator());
  }
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, rewriter.getInsertionBlock(), rewriter.getInsertionPoint(), ivs);
  rewriter.eraseOp(loop);
}

/// Replaces `loop` (a parallel loop nest in host code, without results) by a launch of
/// one thread per iteration. Threads are numbered row-major over the loop's dimensions,
/// so that neighbouring threads of a block take neighbouring innermost iterations: their
/// accesses to contiguous memory coalesce. Blocks have `blockSize` threads (fewer when
/// the loop has fewer iterations, known statically); the grid covers every iteration.
void launchParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop, int64_t blockSize) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto index = [&](int64_t value) { return arith::ConstantIndexOp::create(rewriter, loc, value); };
  SmallVector<Value> trips;
  Value total = index(1);
  std::optional<int64_t> staticTotal = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
    Value trip = arith::CeilDivUIOp::create(rewriter, loc, extent, step);
    trips.push_back(trip);
    total = arith::MulIOp::create(rewriter, loc, total, trip);
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (staticTotal && l && u && s && *s > 0)
      *staticTotal *= *u > *l ? (*u - *l + *s - 1) / *s : 0;
    else
      staticTotal = std::nullopt;
  }
  if (staticTotal == 0) {
    rewriter.eraseOp(loop);
    return;
  }
  int64_t threads = staticTotal ? std::min(*staticTotal, blockSize) : blockSize;
  Value block = index(threads), one = index(1);
  Value grid = arith::CeilDivUIOp::create(rewriter, loc, total, block);
  auto launch = gpu::LaunchOp::create(rewriter, loc, grid, one, one, block, one, one);
  Block &launchBody = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&launchBody);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  Value linear = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x, launch.getBlockSizeX()),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = scf::IfOp::create(rewriter, loc, inRange, /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(guard.thenBlock());
  SmallVector<Value> ivs(trips.size());
  Value rest = linear;
  for (int64_t d = int64_t(trips.size()) - 1; d >= 0; --d) {
    Value position = rest;
    if (d > 0) {
      position = arith::RemUIOp::create(rewriter, loc, rest, trips[d]);
      rest = arith::DivUIOp::create(rewriter, loc, rest, trips[d]);
    }
    Value scaled = arith::MulIOp::create(rewriter, loc, position, loop.getStep()[d]);
    ivs[d] = arith::AddIOp::create(rewriter, loc, loop.getLowerBound()[d], scaled);
  }
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, guard.thenBlock()->getTerminator(), ivs);
  rewriter.eraseOp(loop);
  // Parallel loops nested in the launched one run sequentially in each thread.
  SmallVector<scf::ParallelOp> nested;
  launch.walk([&](scf::ParallelOp inner) { nested.push_back(inner); });
  for (scf::ParallelOp inner : llvm::reverse(nested))
    serialize(rewriter, inner);
}

/// Moves the ops of `run` (consecutive in one host block) that need the device into a
/// one-thread launch. Movable ops whose results the host uses stay on the host: before
/// the launch, or after it when they use a value read back from the device. A load whose
/// value the host uses (`.item()`, a branch on a tensor's value) is read back after the
/// launch (`readOnHost`). A value the device computes and the host uses otherwise, or a
/// read-back value the device uses in the same run, is an error.
LogicalResult launchScalarRun(RewriterBase &rewriter, ArrayRef<Operation *> run) {
  llvm::SetVector<Operation *> device(run.begin(), run.end());
  auto isOutside = [&](Operation *user) {
    while (user && !device.contains(user))
      user = user->getParentOp();
    return !user;
  };
  auto usedOutside = [&](Operation *op) { return llvm::any_of(op->getUsers(), isOutside); };
  llvm::SetVector<memref::LoadOp> readBack;
  llvm::SmallPtrSet<Operation *, 8> addresses;
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : llvm::to_vector(device)) {
      if (isMovable(op) && (usedOutside(op) || addresses.contains(op))) {
        device.remove(op);
        changed = true;
      } else if (auto load = dyn_cast<memref::LoadOp>(op);
                 load && usedOutside(op) && readBack.insert(load)) {
        for (Value operand : load->getOperands())
          if (Operation *def = operand.getDefiningOp())
            addresses.insert(def);
        changed = true;
      }
    }
  }
  // A load that only the host uses is not device work.
  for (memref::LoadOp load : readBack)
    if (llvm::all_of(load->getUsers(), isOutside))
      device.remove(load);
  auto fail = [](Operation *op) {
    return op->emitError() << "'" << op->getName()
                           << "' computes on the device a value that the host uses, which "
                              "--target=cuda does not support yet";
  };
  // Host ops after the launch: those that use a read-back value.
  llvm::SmallPtrSet<Operation *, 8> late;
  for (memref::LoadOp load : readBack)
    late.insert(load);
  for (Operation *op : run) {
    if (device.contains(op) || late.contains(op))
      continue;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !llvm::is_contained(run, def))
        continue;
      if (late.contains(def))
        late.insert(op);
      else if (device.contains(def))
        return fail(def);
    }
  }
  for (Operation *op : device) {
    if (!isa<memref::LoadOp>(op) && usedOutside(op))
      return fail(op);
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !device.contains(def) && late.contains(def))
        return fail(def);
  }
  if (llvm::none_of(device, [](Operation *op) { return !isMovable(op); })) {
    // No device work but reads: each where its load was.
    for (memref::LoadOp load : readBack) {
      rewriter.setInsertionPoint(load);
      rewriter.replaceOp(load, readOnHost(rewriter, load));
    }
    return success();
  }
  llvm::SmallPtrSet<Operation *, 8> erased;
  auto replaceLoad = [&](memref::LoadOp load) {
    Value value = readOnHost(rewriter, load);
    rewriter.replaceUsesWithIf(load.getResult(), value,
                               [&](OpOperand &use) { return isOutside(use.getOwner()); });
    if (!device.contains(load)) {
      erased.insert(load);
      rewriter.eraseOp(load);
    }
  };
  Location loc = run.front()->getLoc();
  rewriter.setInsertionPoint(run.front());
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch = gpu::LaunchOp::create(rewriter, loc, one, one, one, one, one, one);
  for (Operation *op : run)
    if (!device.contains(op) && !late.contains(op))
      rewriter.moveOpBefore(op, launch);
  rewriter.setInsertionPointToEnd(&launch.getBody().front());
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  for (Operation *op : device)
    rewriter.moveOpBefore(op, terminator);
  rewriter.setInsertionPointAfter(launch);
  for (memref::LoadOp load : readBack)
    replaceLoad(load);
  for (Operation *op : run)
    if (!device.contains(op) && late.contains(op) && !erased.contains(op))
      rewriter.moveOpBefore(op, rewriter.getInsertionBlock(), rewriter.getInsertionPoint());
  return success();
}

/// Puts the scalar memory work of `block` (host code) and of the regions of its host
/// ops into one-thread launches.
LogicalResult launchScalarWork(RewriterBase &rewriter, Block &block) {
  SmallVector<Operation *> run;
  bool needsDevice = false;
  auto flush = [&]() -> LogicalResult {
    LogicalResult result = needsDevice ? launchScalarRun(rewriter, run) : success();
    run.clear();
    needsDevice = false;
    return result;
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isDeviceWork(&op)) {
      run.push_back(&op);
      needsDevice = true;
      continue;
    }
    if (isMovable(&op) && !op.hasTrait<OpTrait::IsTerminator>()) {
      run.push_back(&op);
      continue;
    }
    if (failed(flush()))
      return failure();
    if (isa<gpu::LaunchOp>(op))
      continue;
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        if (failed(launchScalarWork(rewriter, inner)))
          return failure();
  }
  return flush();
}

/// Device code reads constant tensors (`memref.get_global`) through its own copy of the
/// global: the outlined kernel's module gets one (tgc-merge-gpu-modules).
void sinkGlobals(RewriterBase &rewriter, gpu::LaunchOp launch) {
  llvm::SetVector<Value> captured;
  launch.getBody().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto global = operand.getDefiningOp<memref::GetGlobalOp>();
          global && !launch->isAncestor(global))
        captured.insert(operand);
  });
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  for (Value value : captured) {
    Operation *copy = rewriter.clone(*value.getDefiningOp());
    rewriter.replaceUsesWithIf(value, copy->getResult(0), [&](OpOperand &use) {
      return launch->isProperAncestor(use.getOwner());
    });
  }
}

/// A constant tensor that host code hands on (to a kernel function, a GEMM helper) as a
/// device buffer: the function copies the global into device memory when it starts (a
/// launch, which reads the device module's copy of the global) and frees it before it
/// returns. Launches that read the global themselves read their own copy (sinkGlobals).
void constantsToDevice(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp global) { globals.push_back(global); });
  Block &entry = func.getBody().front();
  for (memref::GetGlobalOp global : globals) {
    Location loc = global.getLoc();
    rewriter.moveOpBefore(global, &entry, entry.begin());
    rewriter.setInsertionPointAfter(global);
    auto type = llvm::cast<MemRefType>(global.getType());
    Value buffer = memref::AllocOp::create(rewriter, loc,
                                           MemRefType::get(type.getShape(), type.getElementType()));
    rewriter.replaceAllUsesWith(global.getResult(), buffer);
    memref::CopyOp::create(rewriter, loc, global.getResult(), buffer);
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      memref::DeallocOp::create(rewriter, loc, buffer);
    });
  }
}

LogicalResult mapFunction(func::FuncOp func, int64_t blockSize) {
  IRRewriter rewriter(func.getContext());
  constantsToDevice(rewriter, func);
  SmallVector<memref::ReshapeOp> reshapes;
  func.walk([&](memref::ReshapeOp reshape) { reshapes.push_back(reshape); });
  for (memref::ReshapeOp reshape : reshapes)
    (void)foldHostShape(rewriter, reshape);
  // Chunked loops (convolutions over batch chunks) run their chunks one after the other;
  // the device parallelism is within each.
  SmallVector<scf::ForallOp> foralls;
  func.walk([&](scf::ForallOp forall) { foralls.push_back(forall); });
  for (scf::ForallOp forall : foralls) {
    rewriter.setInsertionPoint(forall);
    if (failed(scf::forallToForLoop(rewriter, forall)))
      return forall.emitError("cannot map this loop to sequential launches");
  }
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::makeMemRefCopyOp(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
    rewriter.eraseOp(copy);
  }
  SmallVector<linalg::LinalgOp> structured;
  func.walk([&](linalg::LinalgOp op) { structured.push_back(op); });
  for (linalg::LinalgOp op : structured) {
    if (!op.hasPureBufferSemantics())
      return op.emitError("expected a structured op on buffers after bufferization");
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op.emitError("cannot map this op to GPU threads");
    rewriter.eraseOp(op);
  }
  SmallVector<scf::ParallelOp> outermost;
  func.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
    outermost.push_back(loop);
    return WalkResult::skip();
  });
  for (scf::ParallelOp loop : outermost) {
    if (loop.getNumResults() != 0)
      return loop.emitError("a parallel loop with reductions cannot be mapped to GPU threads");
    launchParallelLoop(rewriter, loop, blockSize);
  }
  if (failed(launchScalarWork(rewriter, func.getBody().front())))
    return failure();
  func.walk([&](gpu::LaunchOp launch) { sinkGlobals(rewriter, launch); });
  return success();
}

struct MapKernelsToGPUPass : public tgc::impl::MapKernelsToGPUPassBase<MapKernelsToGPUPass> {
  using MapKernelsToGPUPassBase::MapKernelsToGPUPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize <= 0 || blockSize > 1024) {
      module.emitError() << "block-size must be in 1..1024, got " << blockSize;
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration() && failed(mapFunction(func, blockSize)))
        return signalPassFailure();
  }
};

/// One `gpu.module @tgc_kernels` instead of one per launch (what gpu-kernel-outlining
/// makes): one binary for the runtime to load, and one ptxas run. Each kernel is named
/// after its module (unique in the host module), and the launches are renamed with it.
/// Globals the kernels read get a copy in the module.
struct MergeGPUModulesPass : public tgc::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    OpBuilder builder(module.getContext());
    builder.setInsertionPointToEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(builder, module.getLoc(), "tgc_kernels");
    SymbolTable table(merged);
    DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp from : modules) {
      for (Operation &op : llvm::make_early_inc_range(*from.getBody())) {
        if (op.hasTrait<OpTrait::IsTerminator>())
          continue;
        // Outlining copies the globals a kernel reads into its module: one copy each
        // (they are the host module's, by name).
        if (auto global = dyn_cast<memref::GlobalOp>(op)) {
          global->remove();
          if (table.lookup(global.getSymName()))
            global.erase();
          else
            table.insert(global);
          continue;
        }
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (!kernel) {
          op.emitError("unexpected op in an outlined GPU module");
          return signalPassFailure();
        }
        SymbolRefAttr old =
            SymbolRefAttr::get(from.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        kernel.setName(from.getName());
        kernel->moveBefore(merged.getBody(), merged.getBody()->end());
        renamed[old] = SymbolRefAttr::get(merged.getNameAttr(),
                                          {FlatSymbolRefAttr::get(kernel.getNameAttr())});
      }
      from.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr to = renamed.lookup(launch.getKernel()))
        launch.setKernelAttr(to);
    });
    // Constant tensors the kernels read.
    SymbolTable hostTable(module);
    WalkResult result = merged.walk([&](memref::GetGlobalOp get) {
      if (table.lookup(get.getName()))
        return WalkResult::advance();
      auto global = hostTable.lookup<memref::GlobalOp>(get.getName());
      if (!global || !global.getConstant()) {
        get.emitError("device code reads a global that is not a constant");
        return WalkResult::interrupt();
      }
      table.insert(global->clone());
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
  }
};

/// The objects of `gpu.binary` ops without their properties: gpu-module-to-binary
/// records how long LLVM and ptxas took, which would make the output differ from compile
/// to compile.
struct DropGPUObjectPropertiesPass
    : public tgc::impl::DropGPUObjectPropertiesPassBase<DropGPUObjectPropertiesPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (auto object : binary.getObjects().getAsRange<gpu::ObjectAttr>())
        objects.push_back(gpu::ObjectAttr::get(object.getTarget(), object.getFormat(),
                                               object.getObject(), nullptr, object.getKernels()));
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};

/// Each launch as sequential loops over its blocks and threads, on the host; each
/// read-back as a copy. The mapped program then runs on the CPU, thread by thread: the
/// kernels tgc-map-kernels-to-gpu forms use neither barriers nor shared memory, so this
/// computes what the GPU would (`tgc compile --target=cuda --emulate-gpu`, a check of
/// the mapping without a GPU).
struct EmulateGPULaunchesPass
    : public tgc::impl::EmulateGPULaunchesPassBase<EmulateGPULaunchesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.hasClusterSize() || launch.getDynamicSharedMemorySize()) {
        launch.emitError("cannot emulate an asynchronous, clustered or shared-memory launch");
        return signalPassFailure();
      }
      Location loc = launch.getLoc();
      rewriter.setInsertionPoint(launch);
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      SmallVector<Value> ivs;
      for (Value bound : {grid.x, grid.y, grid.z, block.x, block.y, block.z}) {
        auto loop = scf::ForOp::create(rewriter, loc, zero, bound, one);
        ivs.push_back(loop.getInductionVar());
        rewriter.setInsertionPoint(loop.getBody()->getTerminator());
      }
      Block &body = launch.getBody().front();
      rewriter.eraseOp(body.getTerminator());
      // The region's arguments: block ids, thread ids, grid sizes, block sizes.
      SmallVector<Value> arguments(ivs);
      arguments.append({grid.x, grid.y, grid.z, block.x, block.y, block.z});
      rewriter.inlineBlockBefore(&body, rewriter.getInsertionBlock(), rewriter.getInsertionPoint(),
                                 arguments);
      rewriter.eraseOp(launch);
    }
    SmallVector<gpu::MemcpyOp> copies;
    getOperation().walk([&](gpu::MemcpyOp copy) { copies.push_back(copy); });
    for (gpu::MemcpyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<memref::CopyOp>(copy, copy.getSrc(), copy.getDst());
    }
  }
};

/// Upstream's `bufferization-lower-deallocations`, whose bookkeeping of what to free
/// (arrays of pointers and ownership flags, written and read by host code) then lives on
/// the host stack: in a CUDA call, `memref.alloc` is device memory, which the host
/// cannot write. The buffers the lowering allocates are those it adds; the others stay.
struct LowerDeallocationsOnHostPass
    : public tgc::impl::LowerDeallocationsOnHostPassBase<LowerDeallocationsOnHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<Operation *> before;
    module.walk([&](memref::AllocOp alloc) { before.insert(alloc); });
    OpPassManager lower(ModuleOp::getOperationName());
    lower.addPass(bufferization::createLowerDeallocationsPass());
    if (failed(runPipeline(lower, module)))
      return signalPassFailure();
    SmallVector<memref::AllocOp> added;
    module.walk([&](memref::AllocOp alloc) {
      if (!before.contains(alloc))
        added.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : added) {
      if (!alloc.getType().hasStaticShape()) {
        alloc.emitError("expected a statically shaped deallocation bookkeeping buffer");
        return signalPassFailure();
      }
      for (Operation *user : llvm::to_vector(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                    alloc.getAlignmentAttr());
    }
  }
};

} // namespace
