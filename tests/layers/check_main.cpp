// Linked with every object of one layer and only the layers below it (layers.cmake):
// building it is the check that the layer calls nothing above itself.
int main() { return 0; }
