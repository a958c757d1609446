//===- ProgramJson.cpp - Fuzzes the runner's reading of model.json --------===//
//
// Any bytes as the model.json beside a model.so with graph breaks (the tiny
// model of test/unit as every graph): the runner (tgc::runner::Program, what
// `tgc run` and tgc.load use) must refuse it with a message or run the program
// it describes on the tiny model's inputs, calls and branches included.
//
//===----------------------------------------------------------------------===//

#include "tgc/Runner/Program.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tgc::runner;

namespace {

/// A scratch directory holding a copy of the tiny model as prog.so.
std::filesystem::path scratchDirectory() {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tgc-fuzz-program-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(TGC_FUZZ_TINY_SO, dir / "prog.so",
                             std::filesystem::copy_options::overwrite_existing);
  return dir;
}

/// Opens the program in `dir` and runs it on the tiny model's inputs.
void openAndRun(const std::filesystem::path &dir) {
  std::unique_ptr<Program> program;
  if (Program::open((dir / "prog.so").string(), program))
    return;
  std::vector<float> x(4 * 4, 1.5f), y(4, -2.0f);
  std::vector<int64_t> xShape{4, 4}, yShape{4};
  auto view = [](std::vector<float> &values, std::vector<int64_t> &shape) {
    DLTensor t{};
    t.data = values.data();
    t.device = {kDLCPU, 0};
    t.ndim = int32_t(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    return t;
  };
  std::vector<DLTensor> inputs{view(x, xShape), view(y, yShape)};
  inputs.resize(program->inputNames().size(), inputs.back());
  (void)program->run(inputs, /*train=*/false, [](const ProgramCall &call) {
    for (const DLTensor *tensor : call.tensors)
      if (!tensor)
        std::abort(); // a call is handed only tensors that exist
    return Status::success();
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path dir = scratchDirectory();
  {
    std::ofstream json(dir / "prog.json", std::ios::binary | std::ios::trunc);
    json.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  }
  // The executor may throw nlohmann::json's exceptions on a malformed model.json, which
  // its callers (tgc run, the C ABI of libtgc_runner.so) turn into errors; nothing else.
  try {
    openAndRun(dir);
  } catch (const nlohmann::json::exception &) {
  }
  return 0;
}
