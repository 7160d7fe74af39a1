void missing(void);
int main(void) { missing(); return 0; }
