package server

// Every test of this package checks that an answer taken from an event's encoded object
// (mutateEventObject) is exactly the object's own encoding: mustMatchEncoding panics otherwise.
// The benchmarks turn the check off (newBenchEnv).
func init() { checkEventAnswers = true }
