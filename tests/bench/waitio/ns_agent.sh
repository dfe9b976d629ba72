#!/usr/bin/env bash
# ns_agent.sh HOST COMMAND...: Open MPI's rsh launcher agent (plm_rsh_agent) for
# tests/bench/waitio.bench.sh: "starts the remote daemon on HOST" by running COMMAND (a
# shell command line) in the network namespace $WIO_AGENT_NS instead, so one mpirun spans
# two namespaces and its ranks talk over the veth between them. HOST is only a name for
# mpirun (the namespace's address).
set -u
shift
exec ip netns exec "$WIO_AGENT_NS" sh -c "$*"
