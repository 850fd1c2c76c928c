// Package deps holds a test that enforces the import arrows of
// shared/docs/BLUEPRINT.md: lower layers never import higher ones.
package deps
