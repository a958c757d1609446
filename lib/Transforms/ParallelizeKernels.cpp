// tgc-parallelize-kernels: the outermost parallel loop of a kernel runs on the runtime's
// thread pool. Its body becomes a function `void(ctx, begin, end)` over a range of the
// loop's outer iterations, and the loop a call of tgc_rt_parallel_for with a context
// that holds the values the body uses from outside.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tgc {
#define GEN_PASS_DEF_PARALLELIZEKERNELSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kParallelFor = "tgc_rt_parallel_for";

/// Loop iterations (of the innermost bodies) below which a loop stays on one thread:
/// a dispatch costs about as much as this many simple iterations.
constexpr int64_t kMinParallelWork = 1 << 15;
/// Outer iterations a split loop should have per thread and more, so that chunks
/// balance; further dimensions stay inside the body (the innermost one vectorizes).
constexpr int64_t kMinOuterIterations = 64;

std::optional<int64_t> staticTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u <= *l ? 0 : (*u - *l + *s - 1) / *s;
}

/// ceildiv(ub - lb, step) at the builder's point: a dimension's iteration count.
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value extent = arith::SubIOp::create(b, loc, ub, lb);
  return arith::CeilDivUIOp::create(b, loc, extent, step);
}

/// Iterations of the innermost bodies of `region` per execution, a vector's elements
/// counting as iterations (unknown trip counts count as large).
int64_t workOf(Region &region);

int64_t workOfLoop(Operation *op) {
  int64_t trips = 1;
  auto multiply = [&](std::optional<int64_t> t) {
    trips = t ? trips * *t : std::max<int64_t>(trips, 1) * kMinParallelWork;
    trips = std::min<int64_t>(trips, int64_t(1) << 40);
  };
  if (auto loop = llvm::dyn_cast<scf::ParallelOp>(op))
    for (auto [l, u, s] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      multiply(staticTripCount(l, u, s));
  else if (auto loop = llvm::dyn_cast<scf::ForOp>(op))
    multiply(staticTripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()));
  return std::min<int64_t>(trips * workOf(op->getRegion(0)), int64_t(1) << 40);
}

int64_t workOf(Region &region) {
  int64_t work = 0, lanes = 1;
  for (Operation &op : region.getOps()) {
    if (llvm::isa<scf::ParallelOp, scf::ForOp>(op))
      work += workOfLoop(&op);
    // A body of vector code (tgc-vectorize-kernels) does a vector's elements of work.
    for (Type type : op.getResultTypes())
      if (auto vector = llvm::dyn_cast<VectorType>(type))
        lanes = std::max<int64_t>(lanes, vector.getNumElements());
  }
  return std::max<int64_t>(work, lanes);
}

struct ParallelizeKernelsPass : tgc::impl::ParallelizeKernelsPassBase<ParallelizeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter types(&getContext());
    SmallVector<std::pair<func::FuncOp, scf::ParallelOp>> loops;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(tgc::attr::kKernel) || func.isExternal())
        continue;
      for (auto loop : func.getBody().getOps<scf::ParallelOp>())
        if (workOfLoop(loop) >= kMinParallelWork)
          loops.push_back({func, loop});
    }
    if (loops.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    Type i64 = b.getI64Type();
    FunctionType taskType = b.getFunctionType({ptr, i64, i64}, {});
    b.setInsertionPointToEnd(module.getBody());
    if (!module.lookupSymbol(kParallelFor)) {
      auto decl = func::FuncOp::create(b, module.getLoc(), kParallelFor,
                                       b.getFunctionType({ptr, ptr, i64}, {}));
      decl.setPrivate();
    }
    llvm::StringMap<unsigned> counts;
    for (auto [func, loop] : loops) {
      std::string name =
          (func.getSymName() + "_par" + llvm::Twine(counts[func.getSymName()]++)).str();
      if (failed(outline(func, loop, name, taskType, types)))
        return signalPassFailure();
    }
  }

  LogicalResult outline(func::FuncOp func, scf::ParallelOp loop, StringRef name,
                        FunctionType taskType, const LLVMTypeConverter &types) {
    MLIRContext *ctx = &getContext();
    Location loc = loop.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    unsigned rank = loop.getNumLoops();

    // How many outer dimensions to split: enough for kMinOuterIterations, never the
    // innermost unless it is the only one.
    unsigned split = 0;
    int64_t outer = 1;
    while (split < rank && (split == 0 || split + 1 < rank) && outer < kMinOuterIterations) {
      std::optional<int64_t> t = staticTripCount(
          loop.getLowerBound()[split], loop.getUpperBound()[split], loop.getStep()[split]);
      outer = t ? outer * *t : kMinOuterIterations;
      ++split;
    }

    // The values the body needs from outside: bounds and steps of every dimension and
    // what the body uses. Constants are cloned instead (the body keeps static shapes).
    llvm::SetVector<Value> captured;
    for (Value v : llvm::concat<Value>(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      captured.insert(v);
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    SmallVector<Value> fields;
    SmallVector<Operation *> constants;
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>() && def->getNumResults() == 1)
        constants.push_back(def);
      else
        fields.push_back(v);
    }
    SmallVector<Type> fieldTypes;
    for (Value v : fields) {
      Type t = types.convertType(v.getType());
      if (!t)
        return loop.emitOpError("cannot pass a value of type ")
               << v.getType() << " to a parallel task";
      fieldTypes.push_back(t);
    }
    auto context = LLVM::LLVMStructType::getLiteral(ctx, fieldTypes);

    // The task: void name(ptr ctx, i64 begin, i64 end).
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    auto task = func::FuncOp::create(b, loc, name, taskType);
    task.setPrivate();
    task->setAttr("llvm.linkage", LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
    task->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    Block *entry = task.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (Operation *c : constants)
      b.clone(*c, map);
    Value loaded = LLVM::LoadOp::create(b, loc, context, entry->getArgument(0));
    for (auto [i, v] : llvm::enumerate(fields)) {
      Value field = LLVM::ExtractValueOp::create(b, loc, loaded, i);
      if (field.getType() != v.getType())
        field = UnrealizedConversionCastOp::create(b, loc, v.getType(), field).getResult(0);
      map.map(v, field);
    }
    auto index = [&](Value v) { return map.lookupOrDefault(v); };
    Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(1));
    Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(2));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> trips;
    for (unsigned d = 0; d < split; ++d) {
      trips.push_back(tripCount(b, loc, index(loop.getLowerBound()[d]),
                                index(loop.getUpperBound()[d]), index(loop.getStep()[d])));
    }
    auto chunkLoop = scf::ForOp::create(b, loc, begin, end, one);
    func::ReturnOp::create(b, loc);
    b.setInsertionPointToStart(chunkLoop.getBody());
    // The linear outer iteration, delinearized (the last split dimension varies fastest).
    Value linear = chunkLoop.getInductionVar();
    SmallVector<Value> ivs(split);
    for (int d = int(split) - 1; d >= 0; --d) {
      Value j = d == 0 ? linear : arith::RemUIOp::create(b, loc, linear, trips[d]).getResult();
      if (d > 0)
        linear = arith::DivUIOp::create(b, loc, linear, trips[d]);
      Value offset = arith::MulIOp::create(b, loc, j, index(loop.getStep()[d]));
      ivs[d] = arith::AddIOp::create(b, loc, index(loop.getLowerBound()[d]), offset);
    }
    Block &body = loop.getRegion().front();
    for (unsigned d = 0; d < split; ++d)
      map.map(body.getArgument(d), ivs[d]);
    auto cloneBody = [&](OpBuilder &inner) {
      for (Operation &op : body.without_terminator())
        inner.clone(op, map);
    };
    if (split == rank) {
      cloneBody(b);
    } else {
      SmallVector<Value> lbs, ubs, steps;
      for (unsigned d = split; d < rank; ++d) {
        lbs.push_back(index(loop.getLowerBound()[d]));
        ubs.push_back(index(loop.getUpperBound()[d]));
        steps.push_back(index(loop.getStep()[d]));
      }
      scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                              [&](OpBuilder &inner, Location, ValueRange innerIvs) {
                                for (unsigned d = split; d < rank; ++d)
                                  map.map(body.getArgument(d), innerIvs[d - split]);
                                cloneBody(inner);
                              });
    }

    // The call site: the context on the stack, then tgc_rt_parallel_for(task, ctx, n).
    b.setInsertionPoint(loop);
    Value count;
    for (unsigned d = 0; d < split; ++d) {
      Value trip =
          tripCount(b, loc, loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]);
      count = count ? arith::MulIOp::create(b, loc, count, trip).getResult() : trip;
    }
    Value record = LLVM::UndefOp::create(b, loc, context);
    for (auto [i, v] : llvm::enumerate(fields)) {
      Value field = v;
      if (fieldTypes[i] != v.getType())
        field = UnrealizedConversionCastOp::create(b, loc, fieldTypes[i], v).getResult(0);
      record = LLVM::InsertValueOp::create(b, loc, record, field, i);
    }
    OpBuilder entryBuilder = OpBuilder::atBlockBegin(&func.getBody().front());
    Value size1 = LLVM::ConstantOp::create(entryBuilder, loc, i64, 1);
    Value slot = LLVM::AllocaOp::create(entryBuilder, loc, ptr, context, size1);
    LLVM::StoreOp::create(b, loc, record, slot);
    Value fn = func::ConstantOp::create(b, loc, taskType, FlatSymbolRefAttr::get(task));
    Value fnPtr = UnrealizedConversionCastOp::create(b, loc, ptr, fn).getResult(0);
    Value n = arith::IndexCastOp::create(b, loc, i64, count);
    func::CallOp::create(b, loc, kParallelFor, TypeRange{}, ValueRange{fnPtr, slot, n});
    loop.erase();
    return success();
  }
};

} // namespace
