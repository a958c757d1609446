// The torch function table: schema parsing, overload resolution and argument binding,
// and building ops from bound calls through AtenCallBuilder.
#include "Frontend/Python/TorchFunctions.h"
#include "Frontend/Common/AtenCall.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

namespace {

/// A function whose arguments are tensors, to bind calls on: `x` and `y` are
/// `!tgc.tensor<[2, 3], f32>`, `mask` a bool tensor.
struct Fixture {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  Value x, y, mask;

  Fixture() {
    ctx.loadDialect<TgcDialect, func::FuncDialect, arith::ArithDialect>();
    module =
        parseSourceString<ModuleOp>("func.func @f(%x: !tgc.tensor<[2, 3], f32, strides=[3, 1]>, "
                                    "%y: !tgc.tensor<[2, 3], f32, strides=[3, 1]>, "
                                    "%mask: !tgc.tensor<[2, 3], i1, strides=[3, 1]>) { return }",
                                    &ctx);
    REQUIRE(module);
    auto func = llvm::cast<func::FuncOp>(module->getBody()->front());
    x = func.getArgument(0);
    y = func.getArgument(1);
    mask = func.getArgument(2);
  }

  AtenValue integer(int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, &ctx)); }
  AtenValue ints(std::vector<int64_t> vs) {
    SmallVector<AffineExpr> sizes;
    for (int64_t v : vs)
      sizes.push_back(getAffineConstantExpr(v, &ctx));
    return AtenValue::ints(sizes);
  }
};

/// Binds a call that must succeed.
BoundCall bind(llvm::StringRef name, std::vector<AtenValue> positional,
               std::vector<AtenArgument> keywords = {}) {
  std::optional<llvm::Expected<BoundCall>> call = bindTorchCall(name, positional, keywords);
  REQUIRE(call.has_value());
  if (!*call)
    FAIL(llvm::toString(call->takeError()));
  return std::move(**call);
}

/// The error of a call that must fail.
std::string bindError(llvm::StringRef name, std::vector<AtenValue> positional,
                      std::vector<AtenArgument> keywords = {}) {
  std::optional<llvm::Expected<BoundCall>> call = bindTorchCall(name, positional, keywords);
  REQUIRE(call.has_value());
  REQUIRE(!*call);
  return llvm::toString(call->takeError());
}

const AtenValue &argument(const BoundCall &call, llvm::StringRef name) {
  for (const AtenArgument &a : call.arguments)
    if (a.name == name)
      return a.value;
  FAIL("no argument '" << name.str() << "' in the call of " << call.target);
  static AtenValue none;
  return none;
}

std::vector<std::string> argumentNames(const BoundCall &call) {
  std::vector<std::string> names;
  for (const AtenArgument &a : call.arguments)
    names.push_back(a.name);
  return names;
}

std::vector<int64_t> constants(const AtenValue &value) {
  std::vector<int64_t> result;
  for (AffineExpr size : value.sizes)
    result.push_back(*getConstantSize(size));
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Schemas
//===----------------------------------------------------------------------===//

TEST_CASE("A schema gives its name, overload, arguments and returns", "[capture][torch]") {
  llvm::Expected<FunctionSchema> schema =
      parseFunctionSchema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  REQUIRE(static_cast<bool>(schema));
  CHECK(schema->name == "add");
  CHECK(schema->overload == "Tensor");
  REQUIRE(schema->arguments.size() == 3);
  CHECK(schema->arguments[0].name == "self");
  CHECK(schema->arguments[0].type == "Tensor");
  CHECK_FALSE(schema->arguments[1].keywordOnly);
  CHECK_FALSE(schema->arguments[1].defaultValue.has_value());
  CHECK(schema->arguments[2].keywordOnly);
  CHECK(schema->arguments[2].type == "Scalar");
  CHECK(schema->arguments[2].defaultValue == "1");
  CHECK(schema->numReturns == 1);
}

TEST_CASE("Schemas drop alias annotations and keep list types and defaults", "[capture][torch]") {
  llvm::Expected<FunctionSchema> schema =
      parseFunctionSchema("max_pool2d_with_indices(Tensor(a!) self, int[2] kernel_size, int[2] "
                          "stride=[], int[2] padding=0, str mode='a, b') -> (Tensor, Tensor)");
  REQUIRE(static_cast<bool>(schema));
  CHECK(schema->overload.empty());
  REQUIRE(schema->arguments.size() == 5);
  CHECK(schema->arguments[0].type == "Tensor");
  CHECK(schema->arguments[1].type == "int[2]");
  CHECK(schema->arguments[2].defaultValue == "[]");
  CHECK(schema->arguments[4].defaultValue == "'a, b'");
  CHECK(schema->numReturns == 2);

  llvm::Expected<FunctionSchema> split =
      parseFunctionSchema("split.Tensor(Tensor(a -> *) self, SymInt split_size) -> Tensor(a)[]");
  REQUIRE(static_cast<bool>(split));
  CHECK(split->arguments[0].type == "Tensor");
  CHECK(split->numReturns == 1);
  llvm::Expected<FunctionSchema> none = parseFunctionSchema("_foo(Tensor? x=None) -> ()");
  REQUIRE(static_cast<bool>(none));
  CHECK(none->numReturns == 0);
}

TEST_CASE("Malformed schemas are errors naming the problem", "[capture][torch]") {
  auto error = [](llvm::StringRef text) {
    llvm::Expected<FunctionSchema> schema = parseFunctionSchema(text);
    REQUIRE_FALSE(static_cast<bool>(schema));
    return llvm::toString(schema.takeError());
  };
  CHECK_THAT(error("relu Tensor self -> Tensor"), Catch::Contains("name(arguments) -> returns"));
  CHECK_THAT(error("relu(Tensor self)"), Catch::Contains("name(arguments) -> returns"));
  CHECK_THAT(error("relu(Tensor) -> Tensor"), Catch::Contains("needs a type and a name"));
  CHECK_THAT(error("relu(Tensr self) -> Tensor"), Catch::Contains("unknown type 'Tensr'"));
  CHECK_THAT(error("add(Tensor self, Tensor self) -> Tensor"),
             Catch::Contains("two arguments named 'self'"));
  CHECK_THAT(error("add(Tensor self, int a=1, int b) -> Tensor"),
             Catch::Contains("required argument 'b' follows"));
  CHECK_THAT(error("add(Tensor self, int[2 a) -> Tensor"), Catch::Contains("unbalanced"));
  CHECK_THAT(error("add(Tensor self, *, *, int a) -> Tensor"), Catch::Contains("two '*'"));
  CHECK_THAT(error("9add(Tensor self) -> Tensor"), Catch::Contains("no valid name"));
  CHECK_THAT(error("add(Tensor self) -> "), Catch::Contains("no return type"));
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

TEST_CASE("Positional and keyword arguments bind by the schema's names", "[capture][torch]") {
  Fixture f;
  BoundCall call = bind("torch.add", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)},
                        {{"alpha", f.integer(2)}});
  CHECK(call.target == "aten.add.Tensor");
  CHECK(argumentNames(call) == std::vector<std::string>{"self", "other", "alpha"});
  CHECK(argument(call, "other").values.front() == f.y);
  // `input` names `self`, as in torch's parser.
  BoundCall relu = bind("torch.relu", {}, {{"input", AtenValue::tensor(f.x)}});
  CHECK(relu.target == "aten.relu.default");
  CHECK(argument(relu, "self").values.front() == f.x);
}

TEST_CASE("A number picks the Scalar overload, a tensor the Tensor one", "[capture][torch]") {
  Fixture f;
  CHECK(bind("torch.add", {AtenValue::tensor(f.x), f.integer(2)}).target == "aten.add.Scalar");
  // x.max(0) is torch's max.dim (a reduction), never maximum(x, 0); max(x, y) is .other.
  CHECK(bind("torch.Tensor.max", {AtenValue::tensor(f.x), f.integer(0)}).target == "aten.max.dim");
  CHECK(bind("torch.Tensor.min", {AtenValue::tensor(f.x), f.integer(1)}).target == "aten.min.dim");
  CHECK(bind("torch.max", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)}).target ==
        "aten.maximum.default");
  CHECK(bind("operator.add", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)}).target ==
        "aten.add.Tensor");
  CHECK(bind("torch.Tensor.mul", {AtenValue::tensor(f.x), AtenValue::floating(0.5)}).target ==
        "aten.mul.Scalar");
  // Without a Scalar overload a number is a wrapped scalar for a Tensor parameter.
  BoundCall maximum = bind("torch.maximum", {AtenValue::tensor(f.x), f.integer(0)});
  CHECK(maximum.target == "aten.maximum.default");
  CHECK(argument(maximum, "other").kind == AtenValue::Kind::Int);
  // A number on the left: 2 - x is rsub(x, 2), 2 / x a division of a wrapped scalar.
  CHECK(bind("operator.rsub", {AtenValue::tensor(f.x), f.integer(2)}).target == "aten.rsub.Scalar");
  BoundCall rtruediv = bind("operator.rtruediv", {AtenValue::tensor(f.x), f.integer(2)});
  CHECK(rtruediv.target == "aten.div.Tensor");
  CHECK(argument(rtruediv, "self").kind == AtenValue::Kind::Int);
  CHECK(argument(rtruediv, "other").values.front() == f.x);
  CHECK(bind("operator.iadd", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)}).target ==
        "aten.add_.Tensor");
}

TEST_CASE("sum with and without dim picks its overload", "[capture][torch]") {
  Fixture f;
  CHECK(bind("torch.sum", {AtenValue::tensor(f.x)}).target == "aten.sum.default");
  BoundCall dim = bind("torch.Tensor.sum", {AtenValue::tensor(f.x), f.integer(1)});
  CHECK(dim.target == "aten.sum.dim_IntList");
  // int[1] takes a single int as a one-element list.
  CHECK(constants(argument(dim, "dim")) == std::vector<int64_t>{1});
  BoundCall keyword = bind("torch.sum", {AtenValue::tensor(f.x)},
                           {{"dim", f.ints({0, 1})}, {"keepdim", AtenValue::boolean(true)}});
  CHECK(keyword.target == "aten.sum.dim_IntList");
  CHECK(constants(argument(keyword, "dim")) == std::vector<int64_t>{0, 1});
  CHECK(argument(keyword, "keepdim").boolValue);
}

TEST_CASE("Several ints for a trailing int list are varargs", "[capture][torch]") {
  Fixture f;
  BoundCall view = bind("torch.Tensor.view", {AtenValue::tensor(f.x), f.integer(3), f.integer(2)});
  CHECK(view.target == "aten.view.default");
  CHECK(constants(argument(view, "size")) == std::vector<int64_t>{3, 2});
  BoundCall one = bind("torch.Tensor.view", {AtenValue::tensor(f.x), f.integer(6)});
  CHECK(constants(argument(one, "size")) == std::vector<int64_t>{6});
  BoundCall tuple = bind("torch.Tensor.permute", {AtenValue::tensor(f.x), f.ints({1, 0})});
  CHECK(constants(argument(tuple, "dims")) == std::vector<int64_t>{1, 0});
  BoundCall zeros = bind("torch.zeros", {f.integer(2), f.integer(3)});
  CHECK(zeros.target == "aten.zeros.default");
  CHECK(constants(argument(zeros, "size")) == std::vector<int64_t>{2, 3});
  CHECK_THAT(bindError("torch.Tensor.view",
                       {AtenValue::tensor(f.x), f.integer(3), AtenValue::floating(2)}),
             Catch::Contains("argument 'size' must be SymInt[], not float"));
}

TEST_CASE("F.batch_norm binds by name and passes its Python defaults", "[capture][torch]") {
  Fixture f;
  // F.batch_norm(input, running_mean, running_var, weight, bias): aten.batch_norm takes
  // weight and bias before the running statistics, and has no defaults.
  BoundCall call =
      bind("torch.nn.functional.batch_norm", {AtenValue::tensor(f.x), AtenValue::tensor(f.y),
                                              AtenValue::tensor(f.y), AtenValue::tensor(f.x)});
  CHECK(call.target == "aten.batch_norm.default");
  CHECK(argument(call, "running_mean").values.front() == f.y);
  CHECK(argument(call, "running_var").values.front() == f.y);
  CHECK(argument(call, "weight").values.front() == f.x);
  CHECK(argument(call, "training").kind == AtenValue::Kind::Bool);
  CHECK_FALSE(argument(call, "training").boolValue);
  CHECK(argument(call, "momentum").floatValue == Approx(0.1));
  CHECK(argument(call, "eps").floatValue == Approx(1e-5));
  // Omitted optional tensors stay omitted.
  CHECK(argumentNames(call) == std::vector<std::string>{"input", "running_mean", "running_var",
                                                        "weight", "training", "momentum", "eps"});
}

TEST_CASE("Python-level arguments are rewritten into ATen's", "[capture][torch]") {
  Fixture f;
  BoundCall inplace = bind("torch.nn.functional.relu", {AtenValue::tensor(f.x)},
                           {{"inplace", AtenValue::boolean(true)}});
  CHECK(inplace.target == "aten.relu_.default");
  CHECK(argumentNames(inplace) == std::vector<std::string>{"self"});
  BoundCall loss =
      bind("torch.nn.functional.cross_entropy", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)},
           {{"reduction", AtenValue::str("sum")}});
  CHECK(loss.target == "aten.cross_entropy_loss.default");
  CHECK(getConstantSize(argument(loss, "reduction").size) == 2);
  CHECK_THAT(bindError("torch.nn.functional.cross_entropy",
                       {AtenValue::tensor(f.x), AtenValue::tensor(f.y)},
                       {{"reduction", AtenValue::str("average")}}),
             Catch::Contains("reduction must be 'none', 'mean' or 'sum'"));
  BoundCall dropout = bind("torch.nn.functional.dropout", {AtenValue::tensor(f.x)});
  CHECK(dropout.target == "aten.dropout.default");
  CHECK(argument(dropout, "train").boolValue);
  CHECK(argument(dropout, "p").floatValue == Approx(0.5));
  BoundCall pool = bind("torch.nn.functional.max_pool2d", {AtenValue::tensor(f.x), f.integer(2)});
  CHECK(constants(argument(pool, "kernel_size")) == std::vector<int64_t>{2, 2});
  CHECK(bind("operator.floordiv", {AtenValue::tensor(f.x), f.integer(2)}).target ==
        "aten.div.Scalar_mode");
  // `&` is bitwise (logical on bools), `%` Python's remainder.
  CHECK(bind("operator.and_", {AtenValue::tensor(f.mask), AtenValue::tensor(f.mask)}).target ==
        "aten.bitwise_and.Tensor");
  CHECK(bind("operator.xor", {AtenValue::tensor(f.mask), f.integer(1)}).target ==
        "aten.bitwise_xor.Scalar");
  CHECK(bind("operator.mod", {AtenValue::tensor(f.x), f.integer(3)}).target ==
        "aten.remainder.Scalar");
  CHECK(bind("torch.fmod", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)}).target ==
        "aten.fmod.Tensor");
}

TEST_CASE("Calls no overload accepts are errors naming the problem", "[capture][torch]") {
  Fixture f;
  CHECK(bindError("torch.relu", {AtenValue::tensor(f.x)}, {{"frobnicate", f.integer(1)}}) ==
        "relu() got an unexpected keyword argument 'frobnicate'");
  CHECK(bindError("torch.matmul", {AtenValue::tensor(f.x)}) ==
        "matmul() missing required argument 'other'");
  CHECK_THAT(bindError("torch.relu", {AtenValue::tensor(f.x), AtenValue::tensor(f.y)}),
             Catch::Contains("takes 1 positional arguments but 2 were given"));
  CHECK_THAT(bindError("torch.add", {AtenValue::tensor(f.x), AtenValue::str("a")}),
             Catch::Contains("add() received an invalid combination of arguments (Tensor, str)"));
  CHECK_THAT(bindError("torch.nn.functional.softmax", {AtenValue::tensor(f.x)}),
             Catch::Contains("without 'dim' is not supported"));
}

TEST_CASE("Callables tgc does not know are nullopt", "[capture][torch]") {
  Fixture f;
  CHECK_FALSE(bindTorchCall("torch.fft.fft", {AtenValue::tensor(f.x)}, {}).has_value());
  CHECK_FALSE(isKnownTorchFunction("operator.getitem"));
  CHECK(isKnownTorchFunction("torch.Tensor.add_"));
  CHECK(isKnownTorchFunction("torch.nn.functional.linear"));
}

TEST_CASE("Every table entry parses and calls an ATen target tgc has", "[capture][torch]") {
  Fixture f;
  OpBuilder builder(&f.ctx);
  AtenCallBuilder aten(builder);
  std::vector<TorchOverloadInfo> overloads = listTorchOverloads();
  REQUIRE(overloads.size() > 200);
  for (const TorchOverloadInfo &overload : overloads) {
    INFO(overload.name << ": " << overload.signature);
    llvm::Expected<FunctionSchema> schema = parseFunctionSchema(overload.signature);
    if (!schema)
      FAIL(llvm::toString(schema.takeError()));
    CHECK(aten.supports(overload.target));
    CHECK(isKnownTorchFunction(overload.name));
  }
  CHECK_FALSE(aten.supports("aten.not_a_real_op.default"));
}

//===----------------------------------------------------------------------===//
// Building ops from bound calls
//===----------------------------------------------------------------------===//

TEST_CASE("A bound call builds its op with the inferred result type", "[capture][torch]") {
  Fixture f;
  auto func = llvm::cast<func::FuncOp>(f.module->getBody()->front());
  OpBuilder builder(&f.ctx);
  builder.setInsertionPointToStart(&func.getBody().front());
  AtenCallBuilder aten(builder);
  auto emitError = [&]() { return mlir::emitError(UnknownLoc::get(&f.ctx)); };

  BoundCall add = bind("torch.add", {AtenValue::tensor(f.x), f.integer(2)});
  FailureOr<Operation *> op =
      aten.build(UnknownLoc::get(&f.ctx), add.target, add.arguments, 1, emitError);
  REQUIRE(succeeded(op));
  CHECK((*op)->getName().getStringRef() == "tgc.add");
  REQUIRE((*op)->getNumOperands() == 2);
  CHECK((*op)->getOperand(0) == f.x);
  CHECK((*op)->getOperand(1).getDefiningOp<arith::ConstantOp>());
  std::string type;
  llvm::raw_string_ostream(type) << (*op)->getResult(0).getType();
  CHECK(type == "!tgc.tensor<[2, 3], f32, strides = [3, 1]>");

  // Adapters compute without recorded results what the .pt2 reader reads from them.
  BoundCall flatten = bind("torch.flatten", {AtenValue::tensor(f.x)});
  FailureOr<Operation *> view =
      aten.build(UnknownLoc::get(&f.ctx), flatten.target, flatten.arguments, 1, emitError);
  REQUIRE(succeeded(view));
  CHECK((*view)->getName().getStringRef() == "tgc.view");
  type.clear();
  llvm::raw_string_ostream(type) << (*view)->getResult(0).getType();
  CHECK_THAT(type, Catch::StartsWith("!tgc.tensor<[6], f32"));

  BoundCall chunk =
      bind("torch.chunk", {AtenValue::tensor(f.x), f.integer(2)}, {{"dim", f.integer(1)}});
  FailureOr<Operation *> split =
      aten.build(UnknownLoc::get(&f.ctx), chunk.target, chunk.arguments, 2, emitError);
  REQUIRE(succeeded(split));
  CHECK((*split)->getNumResults() == 2);
}

TEST_CASE("A call the op rejects is an error and leaves nothing behind", "[capture][torch]") {
  Fixture f;
  auto func = llvm::cast<func::FuncOp>(f.module->getBody()->front());
  Block &body = func.getBody().front();
  OpBuilder builder(&f.ctx);
  builder.setInsertionPointToStart(&body);
  AtenCallBuilder aten(builder);
  std::string message;
  ScopedDiagnosticHandler handler(&f.ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitError = [&]() { return mlir::emitError(UnknownLoc::get(&f.ctx)); };
  size_t before = body.getOperations().size();
  // A scalar `self` becomes a constant before `frobnicate` is found to have no home.
  std::vector<AtenArgument> arguments = {
      {"self", f.integer(1)}, {"other", AtenValue::tensor(f.x)}, {"frobnicate", f.integer(1)}};
  CHECK(failed(aten.build(UnknownLoc::get(&f.ctx), "aten.add.Tensor", arguments, 1, emitError)));
  CHECK(message == "argument 'frobnicate' of aten.add.Tensor has no counterpart on tgc.add");
  CHECK(body.getOperations().size() == before);
  CHECK(
      failed(aten.build(UnknownLoc::get(&f.ctx), "aten.not_a_real_op.default", {}, 1, emitError)));
  CHECK(message == "unsupported operator aten.not_a_real_op.default");
}
