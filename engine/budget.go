package engine

import (
	"context"
	"fmt"

	"github.com/verdict-policy/verdict/engine/internal/wildcard"
)

// BudgetCheckEvery is how many steps a Budget lets pass between two checks
// of its context, and BudgetPollEvery how many calls of Poll.
const (
	BudgetCheckEvery = 1024
	BudgetPollEvery  = 16
)

// matchStepsPerStep is how many steps of wildcard matching (a byte or rune
// of the name against up to 64 pattern runes, see
// engine/internal/wildcard) make one step of a Budget: about the cost of
// visiting one node of a resource.
const matchStepsPerStep = 64

// Budget bounds the work of one evaluation: at most a number of steps (a
// step is one unit of work: a rule, a foreach element, a resource node a
// pattern visits, an element an operator compares, 64 characters a
// wildcard compares), and no work once its context is done. The context is
// checked every BudgetCheckEvery steps and every BudgetPollEvery Polls, so
// a Step or Poll costs a subtraction and a comparison or two. Once spent
// or stopped, a Budget stays so: every later Step, Poll and Err returns the
// same *Error, with code CodeBudgetExceeded or CodeCanceled.
//
// A nil *Budget has no limit and never stops. A Budget belongs to one
// goroutine.
type Budget struct {
	ctx  context.Context
	done <-chan struct{} // ctx.Done(), read once: receiving from it is cheaper than ctx.Err()
	max  int64           // steps allowed; <= 0: no limit
	used int64           // steps charged before the current window
	win  int64           // size of the current window
	left int64           // steps left in the current window
	// polls counts down the Poll calls until the next check of the
	// context.
	polls int64
	// match holds wildcard steps not yet charged as whole steps.
	match int
	err   *Error
}

// NewBudget returns the budget of an evaluation that runs under ctx (nil:
// never canceled) and may take maxSteps steps (<= 0: no limit).
func NewBudget(ctx context.Context, maxSteps int64) *Budget {
	b := new(Budget)
	b.Reset(ctx, maxSteps)
	return b
}

// Reset makes b the fresh budget NewBudget(ctx, maxSteps) would return,
// for a Budget held in a larger struct.
func (b *Budget) Reset(ctx context.Context, maxSteps int64) {
	if ctx == nil {
		ctx = context.Background()
	}
	*b = Budget{ctx: ctx, done: ctx.Done(), max: maxSteps, polls: BudgetPollEvery - 1}
	b.refill()
}

// ctxDone reports whether the context is done, without the call chain of
// ctx.Err through the context's parents.
func (b *Budget) ctxDone() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

func (b *Budget) refill() {
	w := int64(BudgetCheckEvery)
	if b.max > 0 && b.max-b.used < w {
		w = b.max - b.used
	}
	b.win, b.left = w, w
}

// Step charges n steps. It returns nil while the budget lasts and its
// context is not done, and the budget's *Error after that.
func (b *Budget) Step(n int) error {
	if b == nil {
		return nil
	}
	b.left -= int64(n)
	if b.left >= 0 {
		return nil
	}
	return b.check()
}

// Poll charges one step and checks the context every BudgetPollEvery
// calls (and whenever Step would): for the places where one step can be
// costly (a rule, a foreach element, a condition, a context entry, a
// JMESPath query), so that a deadline is noticed after a few of them.
func (b *Budget) Poll() error {
	if b == nil {
		return nil
	}
	b.polls--
	b.left--
	if b.polls >= 0 && b.left >= 0 {
		return nil
	}
	return b.pollSlow()
}

func (b *Budget) pollSlow() error {
	if b.err != nil {
		b.left, b.polls = 0, 0
		return b.err
	}
	b.polls = BudgetPollEvery - 1
	if b.ctxDone() {
		b.stop(b.ctx.Err())
		return b.err
	}
	if b.left < 0 {
		return b.check()
	}
	return nil
}

// check closes the current window: it counts its steps, checks the
// context and the limit, and opens the next window.
func (b *Budget) check() error {
	if b.err != nil {
		b.left = 0 // Used stays where the budget stopped
		return b.err
	}
	b.used += b.win - b.left
	b.win, b.left = 0, 0
	if b.ctxDone() {
		b.stop(b.ctx.Err())
		return b.err
	}
	if b.max > 0 && b.used > b.max {
		b.err = &Error{Code: CodeBudgetExceeded, Message: fmt.Sprintf("evaluation stopped: it needs more than its budget of %d steps (MaxSteps)", b.max)}
		return b.err
	}
	b.refill()
	return nil
}

func (b *Budget) stop(ctxErr error) {
	b.used += b.win - b.left
	b.win, b.left = 0, 0
	b.err = &Error{Code: CodeCanceled, Message: "evaluation stopped: " + ctxErr.Error(), Err: ctxErr}
}

// Err returns the budget's *Error once it is spent or its context is done
// (as found by the last Step or Poll), else nil.
func (b *Budget) Err() error {
	if b == nil || b.err == nil {
		return nil
	}
	return b.err
}

// Used returns the steps charged so far.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used + b.win - b.left
}

// Match reports whether name matches the Kyverno wildcard pattern ('*' and
// '?'), charging the budget with the work; it stops a long match when the
// budget is spent or its context is done.
func (b *Budget) Match(pattern, name string) (bool, error) {
	if b == nil {
		return wildcard.Match(pattern, name), nil
	}
	if len(pattern)+len(name) <= smallMatch {
		// At most smallMatch² character comparisons: charged up front.
		if err := b.Step(1 + (len(pattern)+len(name))/matchStepsPerStep); err != nil {
			return false, err
		}
		return wildcard.Match(pattern, name), nil
	}
	if err := b.Step(1); err != nil {
		return false, err
	}
	m, ok := wildcard.MatchMeter(pattern, name, (*meter)(b))
	if !ok {
		return false, b.Err()
	}
	return m, nil
}

// MatchPattern is Match with a compiled pattern.
func (b *Budget) MatchPattern(p *wildcard.Pattern, name string) (bool, error) {
	if b == nil {
		return p.Match(name), nil
	}
	if p.Linear() || p.Len()+len(name) <= smallMatch {
		if err := b.Step(1 + (p.Len()+len(name))/matchStepsPerStep); err != nil {
			return false, err
		}
		return p.Match(name), nil
	}
	if err := b.Step(1); err != nil {
		return false, err
	}
	m, ok := p.MatchMeter(name, (*meter)(b))
	if !ok {
		return false, b.Err()
	}
	return m, nil
}

// smallMatch is the length of pattern and name up to which Match charges
// its work up front instead of metering it: such a match takes at most a
// few thousand character comparisons.
const smallMatch = 128

// meter charges wildcard work to a Budget (wildcard.Meter).
type meter Budget

func (m *meter) Spend(n int) bool {
	b := (*Budget)(m)
	b.match += n
	if b.match < matchStepsPerStep {
		return b.err == nil
	}
	steps := b.match / matchStepsPerStep
	b.match %= matchStepsPerStep
	return b.Step(steps) == nil
}
