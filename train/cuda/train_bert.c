/* train_bert.c - BERT pretraining on NVIDIA GPUs, one process per GPU:
 * NVIDIA run_pretraining.py's options and loop (trainer.c) over the CUDA
 * backend (backend.cu); launch several with mpirun, srun or torchrun
 * for data parallelism (comm.h). */
#include "common/cli.h"
#include "train/cuda/gpu.h"

int main(int argc, char **argv) {
    cli_init(argv[0]);
    TrainOpts o;
    train_parse_args(&o, argc, argv, 1);
    return train_main(&o, gpu_backend_open);
}
