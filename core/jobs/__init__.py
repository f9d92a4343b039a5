"""The jobs beyond one model held wholly in GPU memory (issue 18): a runtime's own defaults, system RAM as
part
of the budget (partial offload, MoE experts on the CPU, ZeRO offload), preference / RL training layouts,
and the launch line that runs the job as answered."""
