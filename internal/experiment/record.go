package experiment

import (
	"encoding/json"
	"github.com/schedlab/schedlab/internal/sim"

	"github.com/schedlab/schedlab/internal/workload"
)

// RecordSchemaVersion is the version of a run's JSON file: the run
// pipeline's result schema (sim.SchemaVersion) with the point's key.
const RecordSchemaVersion = sim.SchemaVersion

// Record is one finished run: what Execute returns and what a results
// directory holds, one file per run (runs/KEY.json). It is the run
// pipeline's Result (whose Machine is the plan's label and whose Variant
// is the column, Tip or a variant) with the point it ran. Every field but
// Sim.WallNs and Sim.CPUNs is a function of the plan and the point.
type Record struct {
	Key        string `json:"key"`
	Experiment string `json:"experiment"`
	Param      struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"param"`
	Run int `json:"run"`
	// Occupancy is recorded for traced points only.
	Occupancy *Occupancy `json:"occupancy,omitempty"`
	sim.Result
}

// Deterministic returns r's JSON without the wall and CPU times: equal
// for equal plans and points, whatever ran them.
func (r *Record) Deterministic() []byte {
	c := *r
	c.Sim.WallNs, c.Sim.CPUNs = 0, 0
	b, err := json.Marshal(&c)
	if err != nil {
		panic("experiment: " + err.Error())
	}
	return b
}

// Metrics are a run's figures (the one encoding, workload.Metrics).
type Metrics = workload.Metrics
