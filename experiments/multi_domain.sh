#!/usr/bin/env bash
# Multi-Domain unified model, EmbedPlan Table 18: one model on the pooled
# Extrapolation splits of the nine domains, Hit@5 per domain on its held-out
# problems.  The work is experiments/loo.sh with PROTOCOL=multi-domain (see its
# header for the options: DATA, ENCODERS, EPOCHS, LR, PATIENCE, SEED, JOBS,
# DOMAINS, TRAIN_OPTS, TABLES_ONLY).
#   experiments/multi_domain.sh [OUT]        (default results/multi_domain_$DATA)
PROTOCOL=multi-domain exec bash "$(dirname "$0")/loo.sh" "$@"
