#include <iostream>
int main() { std::cout << undeclared << std::endl; }
