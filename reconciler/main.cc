#include "reconciler/cli.h"

int main(int argc, char** argv) { return tr::reconciler::RunCli(argc, argv); }
