// Package kubeevents emits Kubernetes Events as Kyverno does: the
// violations of the results the report writer applies, and the failures of
// generate and mutateExisting rules where they are applied (the webhook
// proxy, the scanner).
//
// Read first: FromEvaluation (which events an evaluation gives: Kyverno's
// webhook for admission requests, allowed or blocked, and its reports
// controller for background scans), the builders (PolicyFail,
// ResourceViolation, BackgroundFailed: Kyverno's event.NewPolicyFailEvent,
// event.NewResourceViolationEvent and event.NewBackgroundFailedEvent, with
// the same reason, type, action, message and objects), Event (the Event
// object, named and cut as Kyverno's event generator does) and Emitter,
// which writes them.
//
// An Emitter never makes its caller wait: Add puts events in one bounded
// queue (Options.MaxQueued, 1000, Kyverno's --maxQueuedEvents default) and
// counts what has no room (verdict_events_dropped_total{cause="queue_full"});
// reasons in Options.Omit (Kyverno's --omitEvents; by default PolicyApplied
// and PolicySkipped, as Kyverno's Helm chart) are left out and counted.
// Workers pass each event through client-go's record.EventCorrelator
// (identical events counted on one Event, similar ones aggregated, a spam
// filter per reporting controller and object) and write it as a core/v1
// Event, retrying a write the API server did not take a few times.
//
// The package imports the API (proto), client-go and Prometheus; it must
// not import server, client, scanner, reportwriter or webhookproxy, which
// hand it their events.
package kubeevents
