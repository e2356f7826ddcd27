/* train_bert_cpu.c - BERT pretraining on the CPU: NVIDIA run_pretraining.py's
 * options and loop (trainer.c) over the C model (bert.c, optim.c). */
#include "common/cli.h"
#include "train/trainer.h"

int main(int argc, char **argv) {
    cli_init(argv[0]);
    TrainOpts o;
    train_parse_args(&o, argc, argv, 0);
    return train_main(&o, cpu_backend_open);
}
