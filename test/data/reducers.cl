// A user reduction function for the tests: the larger of two ints (max through a user function,
// so the custom-reducer path can be checked against the built-in max).
int pick_max(int a, int b) { return a > b ? a : b; }
