package kobj

import "github.com/schedlab/schedlab/internal/engine"

// TimerSlack is the default timer slack of a SCHED_OTHER task
// (current->timer_slack_ns = 50000): an hrtimer sleep (nanosleep, usleep,
// clock_nanosleep) may expire up to this much after its expiry so that
// timers can be batched. schedlab fires sleep timers at the end of the
// slack range, as on an otherwise idle CPU.
const TimerSlack = 50 * engine.Microsecond
