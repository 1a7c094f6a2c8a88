// Package runview renders a load_tester result (a plain run, a merged one,
// a rate-steps run or a knee search) as one self-contained HTML page:
// tables from html/template and charts drawn here as inline SVG (svg.go).
//
// The page has no script, no font and no link: it opens offline, from a
// mail attachment or a CI artifact, and is the same bytes for the same
// result, so a page can be diffed and tested. A charting library would
// bring a script to embed (hundreds of kB, and a page that draws only when
// it runs) or a renderer (gonum/plot's SVG) whose output embeds fonts and
// is several times larger per figure; a run's figures are lines, dots and
// bars over two axes, which a few hundred lines draw.
//
// The package reads nothing and writes only to the io.Writer it is given:
// reading result files is loadtester's (ReadResult, ReadSteps), and the
// command that calls it says what went wrong.
package runview
