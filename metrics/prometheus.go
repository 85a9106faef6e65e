// Package metrics exposes the Temporal SDK's worker metrics and nanobot's
// own (turns, iterations, tool calls, model latency, tokens, errors) in the
// Prometheus text format. Everything flows through the SDK's MetricsHandler,
// so workflow code counts with workflow.GetMetricsHandler (skipped on replay)
// and activities with activity.GetMetricsHandler.
package metrics

import (
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
)

// nanobot's own metric names are in protocol (Metric*); the SDK's keep theirs (temporal_*).
const (
	latencySuffix    = "_seconds"
	defaultTagFiller = "none"
)

// Registry is a Prometheus registry fed by an SDK MetricsHandler.
type Registry struct {
	reg *prometheus.Registry
	mu  sync.Mutex
	// vecs by metric name; the first use fixes a metric's label names.
	counters map[string]*vec[*prometheus.CounterVec]
	gauges   map[string]*vec[*prometheus.GaugeVec]
	timers   map[string]*vec[*prometheus.HistogramVec]
}

type vec[V any] struct {
	labels []string
	v      V
}

// New makes a registry with the Go runtime and process collectors.
func New() *Registry {
	r := &Registry{
		reg:      prometheus.NewRegistry(),
		counters: map[string]*vec[*prometheus.CounterVec]{},
		gauges:   map[string]*vec[*prometheus.GaugeVec]{},
		timers:   map[string]*vec[*prometheus.HistogramVec]{},
	}
	r.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler is the SDK's view of the registry: pass it as client.Options.MetricsHandler.
func (r *Registry) Handler() client.MetricsHandler { return &handler{r: r} }

// HTTP serves /metrics.
func (r *Registry) HTTP() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}))
	return mux
}

// Serve listens on addr and serves /metrics until Close; it returns the bound address.
func (r *Registry) Serve(addr string) (string, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: r.HTTP(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() { _ = srv.Close() }, nil
}

var invalid = regexp.MustCompile(`[^a-zA-Z0-9_:]`)

func clean(name string) string { return invalid.ReplaceAllString(name, "_") }

// values orders tags by the metric's label names; a tag it lacks is "none".
func values(labels []string, tags map[string]string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		v, ok := tags[l]
		if !ok || v == "" {
			v = defaultTagFiller
		}
		out[i] = v
	}
	return out
}

func labelNames(tags map[string]string) []string {
	names := make([]string, 0, len(tags))
	for k := range tags {
		names = append(names, clean(k))
	}
	sort.Strings(names)
	return names
}

func cleanTags(tags map[string]string) map[string]string {
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		out[clean(k)] = v
	}
	return out
}

func (r *Registry) counter(name string, tags map[string]string) prometheus.Counter {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.counters[name]
	if !ok {
		labels := labelNames(tags)
		cv := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help(name)}, labels)
		if r.reg.Register(cv) != nil {
			return prometheus.NewCounter(prometheus.CounterOpts{Name: name}) // a clash with another kind: dropped
		}
		v = &vec[*prometheus.CounterVec]{labels: labels, v: cv}
		r.counters[name] = v
	}
	return v.v.WithLabelValues(values(v.labels, tags)...)
}

func (r *Registry) gauge(name string, tags map[string]string) prometheus.Gauge {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.gauges[name]
	if !ok {
		labels := labelNames(tags)
		gv := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help(name)}, labels)
		if r.reg.Register(gv) != nil {
			return prometheus.NewGauge(prometheus.GaugeOpts{Name: name})
		}
		v = &vec[*prometheus.GaugeVec]{labels: labels, v: gv}
		r.gauges[name] = v
	}
	return v.v.WithLabelValues(values(v.labels, tags)...)
}

func (r *Registry) timer(name string, tags map[string]string) prometheus.Observer {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.timers[name]
	if !ok {
		labels := labelNames(tags)
		buckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
		hv := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help(name), Buckets: buckets}, labels)
		if r.reg.Register(hv) != nil {
			return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name})
		}
		v = &vec[*prometheus.HistogramVec]{labels: labels, v: hv}
		r.timers[name] = v
	}
	return v.v.WithLabelValues(values(v.labels, tags)...)
}

func help(name string) string {
	if strings.HasPrefix(name, "nanobot_") {
		return "nanobot: " + strings.ReplaceAll(strings.TrimPrefix(name, "nanobot_"), "_", " ")
	}
	return "Temporal SDK metric " + name
}

// handler implements client.MetricsHandler over the registry.
type handler struct {
	r    *Registry
	tags map[string]string
}

func (h *handler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &handler{r: h.r, tags: merged}
}

func (h *handler) Counter(name string) client.MetricsCounter {
	c := h.r.counter(clean(name), cleanTags(h.tags))
	return counterFunc(func(d int64) { c.Add(float64(d)) })
}

func (h *handler) Gauge(name string) client.MetricsGauge {
	g := h.r.gauge(clean(name), cleanTags(h.tags))
	return gaugeFunc(g.Set)
}

func (h *handler) Timer(name string) client.MetricsTimer {
	o := h.r.timer(clean(name)+latencySuffix, cleanTags(h.tags))
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
