#include <iostream>
int main(){long long n;std::cin>>n;std::cout<<n-3<<" "<<3<<"\n";}
