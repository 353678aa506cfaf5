//go:build invariants

package sched

const invariantsEnabled = true
