package benchserve

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// canvas accumulates an SVG document. Coordinates are pixels with y down.
type canvas struct {
	w, h int
	b    strings.Builder
}

func newCanvas(w, h int, title string) *canvas {
	c := &canvas{w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&c.b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&c.b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	c.text(float64(w)/2, 22, title, "middle", 15, "bold")
	return c
}

func (c *canvas) bytes() []byte { return []byte(c.b.String() + "</svg>\n") }

func esc(s string) string { return html.EscapeString(s) }

func (c *canvas) text(x, y float64, s, anchor string, size int, weight string) {
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d" font-weight="%s">%s</text>`+"\n",
		x, y, anchor, size, weight, esc(s))
}

func (c *canvas) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`+"\n",
		x1, y1, x2, y2, stroke, width, d)
}

// panel is one plot: a data window mapped onto a pixel rectangle, with
// axes, ticks, grid, titles and a legend.
type panel struct {
	c                      *canvas
	left, top, pw, ph      float64 // plot area in pixels
	xmin, xmax, ymin, ymax float64 // data window
	legendX                float64 // where the next legend entry starts, 0: none yet
}

// newPanel reserves the rectangle at (x, y) of w by h pixels, of which the
// plot area leaves room for tick labels and axis titles.
func (c *canvas) panel(x, y, w, h float64) *panel {
	return &panel{c: c, left: x + 64, top: y + 44, pw: w - 84, ph: h - 94}
}

func (p *panel) px(x float64) float64 {
	if p.xmax == p.xmin {
		return p.left + p.pw/2
	}
	return p.left + (x-p.xmin)/(p.xmax-p.xmin)*p.pw
}

func (p *panel) py(y float64) float64 {
	if p.ymax == p.ymin {
		return p.top + p.ph/2
	}
	return p.top + p.ph - (y-p.ymin)/(p.ymax-p.ymin)*p.ph
}

// yAxis sets the y window to [0, a nice number >= hi] and draws the
// gridlines, tick labels and the axis title.
func (p *panel) yAxis(hi float64, title string) {
	ticks := niceTicks(0, hi)
	p.ymin, p.ymax = 0, ticks[len(ticks)-1]
	for _, t := range ticks {
		y := p.py(t)
		p.c.line(p.left, y, p.left+p.pw, y, "#e0e0e0", 1, "")
		p.c.text(p.left-6, y+4, tickLabel(t), "end", 11, "normal")
	}
	cx, cy := p.left-48, p.top+p.ph/2
	fmt.Fprintf(&p.c.b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
		cx, cy, cx, cy, esc(title))
}

// xAxisNumeric sets the x window to nice bounds around [lo, hi] and draws
// the ticks, labels and title.
func (p *panel) xAxisNumeric(lo, hi float64, title string) {
	ticks := niceTicks(lo, hi)
	p.xmin, p.xmax = ticks[0], ticks[len(ticks)-1]
	for _, t := range ticks {
		x := p.px(t)
		p.c.line(x, p.top+p.ph, x, p.top+p.ph+5, "black", 1, "")
		p.c.text(x, p.top+p.ph+18, tickLabel(t), "middle", 11, "normal")
	}
	p.c.text(p.left+p.pw/2, p.top+p.ph+38, title, "middle", 12, "normal")
}

// xAxisCategories places labels[i] at x = i, evenly spaced with half a
// step of margin on both sides.
func (p *panel) xAxisCategories(labels []string, title string) {
	p.xmin, p.xmax = -0.5, float64(len(labels))-0.5
	for i, l := range labels {
		x := p.px(float64(i))
		p.c.line(x, p.top+p.ph, x, p.top+p.ph+5, "black", 1, "")
		p.c.text(x, p.top+p.ph+18, l, "middle", 11, "normal")
	}
	p.c.text(p.left+p.pw/2, p.top+p.ph+38, title, "middle", 12, "normal")
}

// frame draws the plot area's border and the panel title.
func (p *panel) frame(title string) {
	fmt.Fprintf(&p.c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="black"/>`+"\n",
		p.left, p.top, p.pw, p.ph)
	p.c.text(p.left+p.pw/2, p.top-24, title, "middle", 13, "bold")
}

// series draws ys against xs as a line with dot markers (dash "" for a
// solid line) and adds it to the legend.
func (p *panel) series(xs, ys []float64, color, dash, name string) {
	var pts []string
	for i := range xs {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.px(xs[i]), p.py(ys[i])))
	}
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	if len(pts) > 1 {
		fmt.Fprintf(&p.c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), color, d)
	}
	p.dots(xs, ys, color, 3.5)
	p.key(color, dash, name, true)
}

// dots draws unconnected markers.
func (p *panel) dots(xs, ys []float64, color string, r float64) {
	for i := range xs {
		fmt.Fprintf(&p.c.b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`+"\n", p.px(xs[i]), p.py(ys[i]), r, color)
	}
}

// key adds a legend entry to the row between the panel's title and its
// plot area, where it can hide no data.
func (p *panel) key(color, dash, name string, marker bool) {
	if p.legendX == 0 {
		p.legendX = p.left
	}
	x, y := p.legendX, p.top-8
	p.legendX += 34 + 6.5*float64(len(name))
	p.c.line(x, y-4, x+20, y-4, color, 2, dash)
	if marker {
		fmt.Fprintf(&p.c.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x+10, y-4, color)
	}
	p.c.text(x+25, y, name, "start", 11, "normal")
}

// niceTicks returns about five evenly spaced round values (steps of 1, 2
// or 5 times a power of ten) covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		if lo == 0 {
			return []float64{0, 1}
		}
		lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		if lo > 0 && hi > 0 && lo < hi/4 {
			lo = 0
		}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step) * step
	var ts []float64
	for i := 0; ; i++ {
		t := first + float64(i)*step
		ts = append(ts, t)
		if t >= hi-step*1e-9 || i > 20 {
			break
		}
	}
	return ts
}

// tickLabel writes a tick value compactly: 0.5, 20, 1500, 2e+06.
func tickLabel(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
