// Package quantity parses and compares Kubernetes resource quantities with
// the results of resource.ParseQuantity and Quantity.Cmp, at a cost bounded
// by the length of the input.
//
// Quantities come from resources, so their size is in the hands of whoever
// writes one. resource.ParseQuantity and Quantity.Cmp do arithmetic on
// 10^exponent: "1e-2000000000" takes the parser, and "1e2000000000" against
// "1" the comparison, minutes and gigabytes. Pattern operators and condition
// operators both compare quantities, so both go through this package.
//
// It imports only the standard library and k8s.io/apimachinery.
package quantity
