#ifndef UK_PIC_H
#define UK_PIC_H
void pic_disable(void);
#endif
