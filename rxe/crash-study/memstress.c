// Multi-threaded memcpy/memmove/memset/memcmp stress with verification: glibc picks its
// AVX2 variants when the CPU says avx2. Any mismatch is a wrong result from the CPU (emulator).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <sched.h>
static volatile int stop;
static long bad[64], ops[64];
static uint64_t xs(uint64_t *s){*s^=*s<<13;*s^=*s>>7;*s^=*s<<17;return *s;}
static void *run(void *a){
  long id=(long)a; uint64_t s=0x9E3779B97F4A7C15ull*(id+1);
  size_t cap=1<<17; unsigned char *src=malloc(cap+64),*dst=malloc(cap+64),*ref=malloc(cap+64);
  while(!stop){
    size_t n=1+xs(&s)%(cap/2), so=xs(&s)%64, d=xs(&s)%64;
    for(size_t i=0;i<n;i++) src[so+i]=(unsigned char)(xs(&s));
    switch(xs(&s)%4){
    case 0: memcpy(dst+d,src+so,n); if(memcmp(dst+d,src+so,n)) bad[id]++;
            for(size_t i=0;i<n;i++) if(dst[d+i]!=src[so+i]){bad[id]++;break;} break;
    case 1: { memcpy(ref,src+so,n); size_t sh=xs(&s)%4096; if(sh>n) sh=n;
            memmove(src+so+sh,src+so,n-sh); for(size_t i=0;i<n-sh;i++) if(src[so+sh+i]!=ref[i]){bad[id]++;break;} } break;
    case 2: { unsigned char c=xs(&s); memset(dst+d,c,n); for(size_t i=0;i<n;i++) if(dst[d+i]!=c){bad[id]++;break;} } break;
    case 3: memcpy(dst+d,src+so,n); dst[d+n/2]^=1; if(!memcmp(dst+d,src+so,n)) bad[id]++; break;
    }
    ops[id]++;
    if((ops[id]&255)==0) sched_yield();
  }
  return 0;
}
int main(int c,char**v){int t=atoi(v[1]),secs=atoi(v[2]);pthread_t th[64];
  for(long i=0;i<t;i++)pthread_create(&th[i],0,run,(void*)i);
  struct timespec ts={secs,0};nanosleep(&ts,0);stop=1;long b=0,o=0;
  for(int i=0;i<t;i++){pthread_join(th[i],0);b+=bad[i];o+=ops[i];}
  printf("memstress: threads=%d secs=%d ops=%ld mismatches=%ld\n",t,secs,o,b);return b?1:0;}
