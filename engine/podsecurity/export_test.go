package podsecurity

// ContainerList is containerList, for the tests of package podsecurity_test.
var ContainerList = containerList
