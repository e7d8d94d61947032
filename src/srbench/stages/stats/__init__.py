"""Statistics: intervals (weighted Hoeffding, the betting confidence sequence), paired figures, power and
valid early stopping."""
