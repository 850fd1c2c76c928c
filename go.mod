module kiln

go 1.26.8

require (
	github.com/ardanlabs/jinja v1.8.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require golang.org/x/text v0.44.0
