#include "worker.h"

int main(int argc, char** argv) {
  return kiln::multiprocess::RunWorker(argc, argv);
}
