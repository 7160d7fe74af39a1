int main(void) { this is not C }
