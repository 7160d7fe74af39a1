#include <iostream>
int main(){std::cout<<"five and five\n";}
